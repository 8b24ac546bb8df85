"""Compatibility namespace mirroring onnxruntime.capi."""
