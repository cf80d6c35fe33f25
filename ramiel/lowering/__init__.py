"""ramiel.lowering"""
