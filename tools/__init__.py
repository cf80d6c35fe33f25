"""Command-line tools: ramiel-opt, ramiel-translate, ramiel."""
