"""Fast paths of the shipped detector against fp32 eager: F1 between their word boxes >= 0.99 on rendered,
scan-degraded page regions (512 x 384 inputs to keep the CPU suite short)."""

from pathlib import Path

import numpy as np
import pytest
import torch

from vision.evaluation.metrics import Counts, detection_counts
from vision.models import get_entry, get_model
from vision.fast.compile import compile_model
from vision.fast.onnx import OnnxRunner, export_onnx
from vision.fast.precision import to_bf16
from vision.fast.quantize import quantize_onnx_int8
from vision.models.detection.dbnet import DBProbability
from vision.predictors.detection.predictor import ONNX_AXES, DetectionPredictor
from vision.ops.db_postprocess import DBOptions
from vision.training.synth.fonts import discover_fonts
from vision.training.synth.page_degrade import degrade_page
from vision.training.synth.pages import PageRenderer

SHAPE = (512, 384)
WORDS = (
    "Date:",
    "TOTAL",
    "Invoice",
    "of",
    "the",
    "Company",
    "12/04/1998",
    "$1,250.00",
    "Report",
    "R&D",
    "No.",
    "Smith",
    "approved",
    "(212)",
    "555-0134",
    "Tobacco",
    "Research",
    "Brand",
    "Sales",
    "Fax:",
)


@pytest.fixture(scope="module")
def pages() -> list[np.ndarray]:
    fonts = discover_fonts(["/usr/share/fonts/truetype/dejavu"], include_system=False)
    renderer = PageRenderer(fonts, lambda rng: WORDS[int(rng.integers(len(WORDS)))])
    rng = np.random.default_rng(7)
    out = []
    for layout in ("form", "letter", "receipt"):
        page = renderer(rng, layout).image
        region = np.full((*SHAPE, 3), 255, np.uint8)
        crop = page[40 : 40 + SHAPE[0], 20 : 20 + SHAPE[1]]
        region[: crop.shape[0], : crop.shape[1]] = crop
        out.append(degrade_page(region, rng, "scan"))
    return out


@pytest.fixture(scope="module")
def model() -> DBProbability:
    return DBProbability(get_model("db_mobilenet_v3_large")).eval()


def _predictor(m, dtype=torch.float32, shape=SHAPE) -> DetectionPredictor:
    cfg = get_model("db_mobilenet_v3_large", weights=None).config
    params = DBOptions(**get_entry("db_mobilenet_v3_large").weights.meta["postprocess"])
    return DetectionPredictor(
        m,
        mean=cfg.mean,
        std=cfg.std,
        device=torch.device("cpu"),
        dtype=dtype,
        batch_size=3,
        params=params,
        shapes=(shape,),
    )


@pytest.fixture(scope="module")
def reference(model, pages):
    results = _predictor(model)(pages)
    assert sum(len(r) for r in results) > 60  # enough words for the agreement to mean something
    return results


def _agreement(ref, other) -> float:
    total = Counts()
    for a, b in zip(ref, other):
        total = total + detection_counts(a.boxes.astype(np.float64), b.boxes.astype(np.float64), 0.5)
    return total.f1


def test_bf16(model, pages):
    """A 128 x 384 strip only: CPUs without bf16 units run bf16 depthwise convolutions on a slow fallback
    (~37 s for a 512 x 384 region here). Agreement on 32 full pages on CUDA is benchmarks/detection.py's
    ``f1_vs_fp32`` (0.9986 on an H200)."""
    import copy

    strip = [np.ascontiguousarray(pages[0][96:224])]
    ref = _predictor(model, shape=(128, 384))(strip)
    assert len(ref[0]) >= 8
    m = to_bf16(copy.deepcopy(model))
    assert _agreement(ref, _predictor(m, torch.bfloat16, shape=(128, 384))(strip)) >= 0.99


def test_compile_graph(model, pages, reference):
    compiled = compile_model(model.eval(), dynamic=False, backend="aot_eager")
    assert _agreement(reference, _predictor(compiled)(pages)) >= 0.99


@pytest.fixture(scope="module")
def onnx_file(model, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("onnx") / "det.onnx"
    return export_onnx(model, path, torch.zeros(1, 3, 256, 256), dynamic_axes=ONNX_AXES, output_name="prob")


def test_onnx_fp32(onnx_file, pages, reference):
    assert _agreement(reference, _predictor(OnnxRunner(onnx_file, threads=2))(pages)) >= 0.99


def test_int8_dynamic(onnx_file, pages, reference, tmp_path):
    q = quantize_onnx_int8(onnx_file, tmp_path / "det_int8.onnx")
    assert q.stat().st_size < onnx_file.stat().st_size / 2  # weights really are int8
    assert _agreement(reference, _predictor(OnnxRunner(q, threads=2))(pages)) >= 0.99


def test_cpu_default_runs_the_cached_onnx_export(model, pages, reference, tmp_path, monkeypatch):
    from vision.fast.onnx import OnnxRunner
    from vision.predictors.detection.predictor import detection_predictor

    monkeypatch.setenv("VISION_CACHE", str(tmp_path))
    default = detection_predictor(device="cpu")
    assert isinstance(default.model, OnnxRunner)
    assert isinstance(detection_predictor(device="cpu", onnx=False).model, DBProbability)
    x = default.preprocess(np.stack(pages[:2]))
    with torch.inference_mode():
        torch.testing.assert_close(default.model(x), model(x), rtol=1e-4, atol=1e-4)
    assert _agreement(reference, _predictor(default.model)(pages)) >= 0.99
    with pytest.raises(ValueError, match="float32"):
        detection_predictor(weights=None, device="cpu", dtype=torch.bfloat16, onnx=True)


def test_a_cached_export_of_registered_weights_builds_no_model(model, pages, tmp_path, monkeypatch):
    """The export of a registered model's weight file is keyed by the file (``weights_key``): once cached,
    building the predictor builds no network; other weights get their own export, bad ones still raise."""
    from safetensors.torch import save_file

    from vision.errors import WeightsError
    from vision.fast.onnx import OnnxRunner
    from vision.predictors.detection import predictor as module

    monkeypatch.setenv("VISION_CACHE", str(tmp_path))
    module.detection_predictor(device="cpu")
    assert len(list((tmp_path / "onnx").glob("*.onnx"))) == 1

    def no_build(*args, **kwargs):
        raise AssertionError("the model was built")

    with monkeypatch.context() as patched:
        patched.setattr(module, "get_model", no_build)
        cached = module.detection_predictor(device="cpu")
    assert isinstance(cached.model, OnnxRunner)
    x = cached.preprocess(np.stack(pages[:2]))
    with torch.inference_mode():
        torch.testing.assert_close(cached.model(x), model(x), rtol=1e-4, atol=1e-4)

    state = {k: v.clone() for k, v in get_model("db_mobilenet_v3_large").state_dict().items()}
    first = next(k for k in state if k.endswith("weight") and state[k].is_floating_point())
    state[first] = state[first] * 0.5
    save_file(state, str(tmp_path / "other.safetensors"))
    other = module.detection_predictor(device="cpu", weights=str(tmp_path / "other.safetensors"))
    assert len(list((tmp_path / "onnx").glob("*.onnx"))) == 2
    with torch.inference_mode():
        assert not torch.allclose(other.model(x), cached.model(x), atol=1e-3)
    (tmp_path / "junk.safetensors").write_bytes(b"not a weight file")
    with pytest.raises(WeightsError):
        module.detection_predictor(device="cpu", weights=str(tmp_path / "junk.safetensors"))


def test_weights_key_follows_name_checksum_and_wrapper():
    from vision.fast.onnx import weights_key

    key = weights_key("db_mobilenet_v3_large", "ab" * 32, "DBProbability")
    assert key == weights_key("db_mobilenet_v3_large", "ab" * 32, "DBProbability")
    assert key != weights_key("db_mobilenet_v3_large_photo", "ab" * 32, "DBProbability")
    assert key != weights_key("db_mobilenet_v3_large", "cd" * 32, "DBProbability")
    assert key != weights_key("db_mobilenet_v3_large", "ab" * 32)


def test_the_cpu_pipeline_with_cached_exports_leaves_torchvision_unimported(tmp_path):
    """The whole CPU OCR predictor, once its exports are cached, imports no torchvision (~1.7 s of start-up
    on the 2-core CPU) and builds no torch model."""
    import os
    import subprocess
    import sys

    code = (
        "import sys, numpy as np, vision; p = vision.ocr_predictor(device='cpu'); "
        "p([np.full((200, 300, 3), 255, np.uint8)]); print('torchvision' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "VISION_CACHE": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                           check=False) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr[-2000:]
    assert runs[1].stdout.strip().splitlines()[-1] == "False"


def test_numpy_preprocess_matches_torch(pages):
    """The CPU path normalises with NumPy; the device path (GPU) with torch: same tensor."""
    p = _predictor(lambda x: x)
    canvases = np.stack(pages)
    x = torch.from_numpy(canvases).permute(0, 3, 1, 2).float()
    torch.testing.assert_close(p.preprocess(canvases), ((x - p._mean) / p._std).contiguous())
