"""Ramiel: ONNX to readable task-parallel PyTorch."""
