"""ramiel.runtime"""
