"""CPU seconds per page of ``vision.ocr_predictor()`` with two builds of the package, alternated page by page.

    python benchmarks/ocr_speed_compare.py PAGES PACKAGE_ROOT... [> result.json]

Each PACKAGE_ROOT is a folder holding a ``vision/`` package (a checkout, or a copy whose shipped weights differ:
e.g. the previous default detector). One child process per package runs the OCR defaults on the CPU
(onnxruntime fp32, 2 threads, its own ONNX cache), warmed on the first page; the parent feeds the first PAGES
``funsd_dev`` pages to each child in turn, so both see the same machine load (the dev CPU is shared).
Prints JSON: seconds per page (mean over the pages) and the detector's sha256 for each package.
"""
import json
import subprocess
import sys

N, pkgs = int(sys.argv[1]), sys.argv[2:]
child = r'''
import sys, time, json, torch
torch.set_num_threads(2)
import vision
from vision.evaluation.data import open_set
from vision.models.detection._weights import DEFAULT_WEIGHTS
ocr = vision.ocr_predictor(device="cpu")
pages = [s.load_image() for s in open_set("/work/shared/data/funsd_dev", limit=int(sys.argv[1]))]
ocr([pages[0]])  # warm: onnx export cached, sessions built
for line in sys.stdin:
    i = int(line)
    t = time.perf_counter(); ocr([pages[i]]); print(json.dumps({"i": i, "s": time.perf_counter() - t}), flush=True)
print(json.dumps({"sha": DEFAULT_WEIGHTS["db_mobilenet_v3_large"].sha256}), flush=True)
'''
procs = [subprocess.Popen([sys.executable, "-c", child, str(N)], cwd=p, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True, env={"PYTHONPATH": p, "OMP_NUM_THREADS": "2", "VISION_CACHE": f"/tmp/vision-speed-cache{k}", "PATH": "/usr/bin:/bin"})
         for k, p in enumerate(pkgs)]
times = [[] for _ in pkgs]
for i in range(N):
    for k, pr in enumerate(procs):
        pr.stdin.write(f"{i}\n"); pr.stdin.flush()
        times[k].append(json.loads(pr.stdout.readline())["s"])
out = []
for k, pr in enumerate(procs):
    pr.stdin.close(); sha = json.loads(pr.stdout.readline())["sha"]; pr.wait()
    out.append({"package": pkgs[k], "detector_sha256": sha[:12], "s_per_page": round(sum(times[k]) / N, 3), "pages": N})
print(json.dumps(out, indent=1))
