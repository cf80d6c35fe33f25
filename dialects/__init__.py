"""Ramiel dialects: onnx, cluster, torchpy."""
