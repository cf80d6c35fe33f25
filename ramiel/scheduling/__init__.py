"""ramiel.scheduling"""
