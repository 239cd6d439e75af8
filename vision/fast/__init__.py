"""Fast paths applied after a model is built (never flags read at import).

Each transform takes a model (and options) and returns a model or a runnable; each is tested against the
plain fp32 eager path. Modules: ``precision`` (bf16), ``compile`` (torch.compile), ``quantize`` (int8 and
float8 dynamic quantization via torchao), ``sparsity`` (2:4 semi-structured), ``onnx`` (export + onnxruntime),
``layout`` (channels-last convolutions, the predictors' default on CUDA).
All are opt-in except ``onnx``, which the detection and recognition predictors use by default on CPU in
float32 (exports cached per weights; ``onnx=False`` for eager PyTorch).
"""
