"""Build the folder that lets benchmarks/video.py run on the GPU machine (it has no FFmpeg and no torchcodec).

    python benchmarks/video_carry.py [--dest .carry/video] [--torchcodec 0.11.*] [--python 3.12]

Run it here (Debian 12, FFmpeg 5.1 installed by ``make setup``). It writes:

* ``DEST/lib``: Debian's FFmpeg 5.1 shared libraries (libavcodec59, libavformat59, libavutil57, libswscale6,
  libswresample4, libavdevice59, libavfilter8, libpostproc56) and libx264-164 (to encode the benchmark video),
  fetched with ``apt-get download`` and unpacked with ``dpkg -x``;
* stubs, in the same folder, for every other library those need (SDL, PulseAudio, X11, codec libraries for
  other formats, ...): each stub has the real library's file name and exports the exact symbols and symbol
  versions FFmpeg imports from it, as functions returning 0 (one, probed on every open, returns an empty
  string). Their real closure is ~240 MB (206 libraries, 94 MB
  of packages), over the 64 MiB a device call can carry; H.264 decoding and x264 encoding never call into
  them. Libraries every glibc system running Python has (libc, libm, libstdc++, zlib, liblzma, ...) are left
  to the machine;
* ``DEST/whl``: the torchcodec wheel for the machine's torch (torchcodec 0.11 pairs with torch 2.11), from
  PyPI (CPU decoding; for NVDEC pick the ``+cu130`` build of download.pytorch.org/whl/cu130 by hand),
  rapidfuzz (the timeline merge) and pyclipper (DB post-processing), which the machine lacks too.

Then it checks, here, that torchcodec decodes and encodes H.264 with ``LD_LIBRARY_PATH=DEST/lib``: the stubs
shadow this machine's own copies, so what loads is what travels. docs/video.md gives the device command.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = (
    "libavcodec59",
    "libavformat59",
    "libavutil57",
    "libswscale6",
    "libswresample4",
    "libavdevice59",
    "libavfilter8",
    "libpostproc56",
    "libx264-164",
)
SYSTEM = {  # present wherever Python runs; Python itself loads several of them, so they must not be shadowed
    "libc.so.6",
    "libm.so.6",
    "libstdc++.so.6",
    "libgcc_s.so.1",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
    "libz.so.1",
    "liblzma.so.5",
    "libbz2.so.1.0",
    "libzstd.so.1",
    "libffi.so.8",
    "libexpat.so.1",
}
# Stubbed functions called while FFmpeg probes a file, whose result is dereferenced: libavformat's libgme
# demuxer reads ``gme_identify_header(buf)[0]`` (an empty string means "not a GME file").
POINTER_RESULTS = {"gme_identify_header": "static const char none[1]; return (long)none;"}
_SYM = re.compile(
    r"^\s*\d+:\s+\S+\s+(\S+)\s+(FUNC|OBJECT|TLS|NOTYPE|IFUNC)\s+\S+\s+\S+\s+(\S+)\s+([^\s@]+)(@@?(\S+))?"
)


def run(cmd: list[str], **kwargs) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kwargs).stdout


def needed(lib: Path) -> list[str]:
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", run(["readelf", "-dW", str(lib)]))


def symbols(lib: Path) -> list[tuple[str, str, str | None, bool, int]]:
    """``(name, type, version, defined, size)`` of the dynamic symbols of ``lib``."""
    out = []
    for line in run(["readelf", "--dyn-syms", "-W", str(lib)]).splitlines():
        match = _SYM.match(line)
        if match and match.group(4):
            size, kind, ndx, name, _, version = match.groups()
            out.append((name, kind, version if version else None, ndx != "UND", int(size, 0)))
    return out


def system_path(soname: str) -> Path | None:
    """Where this machine's copy of ``soname`` lives (for symbol types and providers)."""
    for line in run(["ldconfig", "-p"]).splitlines():
        if line.strip().startswith(soname + " ") and "x86-64" in line:
            return Path(line.rsplit("=> ", 1)[1].strip())
    return None


def fetch(dest: Path) -> list[Path]:
    """apt-get download + dpkg -x of :data:`PACKAGES`; returns the real libraries copied to ``dest/lib``."""
    debs, root, lib = dest / "debs", dest / "root", dest / "lib"
    for folder in (debs, root, lib):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    subprocess.run(["apt-get", "download", *PACKAGES], cwd=debs, check=True)
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    real = []
    for so in sorted((root / "usr/lib/x86_64-linux-gnu").glob("*.so.*")):
        if so.is_file() and not so.is_symlink():
            soname = re.search(
                r"\(SONAME\)\s+Library soname: \[(.+?)\]", run(["readelf", "-dW", str(so)])
            ).group(1)
            shutil.copy2(so, lib / soname)
            real.append(lib / soname)
    shutil.rmtree(root)
    return real


def stub_source(imports: dict[str, tuple[str, str | None, int]]) -> tuple[str, str | None]:
    """C source and version script exporting ``imports`` (name -> (type, version, size)) as empty symbols.

    Unversioned names join the first version node when there is one (GNU ld refuses to mix an anonymous
    node with named ones, and a default version satisfies an unversioned reference).
    """
    lines, nodes = [], {}
    for i, (name, (kind, version, size)) in enumerate(sorted(imports.items())):
        if kind == "OBJECT":
            lines.append(f'char s{i}[{max(size, 8)}] __asm__("{name}") = {{0}};')
        elif kind == "TLS":
            lines.append(f'__thread char s{i}[{max(size, 8)}] __asm__("{name}");')
        else:  # returns 0 (NULL, false, success) unless the caller needs a valid pointer
            body = POINTER_RESULTS.get(name, "return 0;")
            lines.append(f'long s{i}(void) __asm__("{name}"); long s{i}(void) {{ {body} }}')
        nodes.setdefault(version, []).append(name)
    named = [v for v in nodes if v]
    if not named:
        script = "{ global: " + "; ".join(nodes[None]) + "; local: *; };" if nodes else None
    else:
        nodes[named[0]] += nodes.pop(None, [])
        script = "\n".join(f"{v} {{ global: {'; '.join(nodes[v])}; }};" for v in named)
    return "\n".join(lines) + "\n", script


def make_stubs(real: list[Path], lib: Path) -> list[str]:
    """Write a stub for each library the real ones need that neither travels nor is a system library."""
    have = {p.name for p in real}
    wanted: dict[str, dict[str, tuple[str, str | None, int]]] = {}
    for so in real:
        deps = [d for d in needed(so) if d not in have and d not in SYSTEM]
        provided = {d: {s[0]: s for s in symbols(p) if s[3]} for d in deps if (p := system_path(d))}
        for name, _, version, defined, _ in symbols(so):
            if defined:
                continue
            for dep in deps:  # the first direct dependency defining it, as the link editor chose
                if name in provided.get(dep, {}):
                    info = provided[dep][name]
                    wanted.setdefault(dep, {})[name] = (info[1], version, info[4])
                    break
        for dep in deps:
            wanted.setdefault(dep, {})
    with tempfile.TemporaryDirectory() as tmp:
        for soname, imports in sorted(wanted.items()):
            source, script = stub_source(imports)
            c, vs = Path(tmp) / "stub.c", Path(tmp) / "stub.map"
            c.write_text(source)
            flags = [f"-Wl,-soname,{soname}"]
            if script:
                vs.write_text(script + "\n")
                flags.append(f"-Wl,--version-script={vs}")
            run(["gcc", "-shared", "-fPIC", "-nostdlib", "-O0", "-o", str(lib / soname), str(c), *flags])
    return sorted(wanted)


def fetch_wheels(dest: Path, torchcodec: str, python: str) -> None:
    """torchcodec for the machine's torch, rapidfuzz (timeline merge) and pyclipper (DB post-processing): the
    machine has none of them."""
    from importlib.metadata import version

    whl = dest / "whl"
    shutil.rmtree(whl, ignore_errors=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            python,
            "--implementation",
            "cp",
            "--platform",
            "manylinux_2_28_x86_64",
            "--platform",
            "manylinux_2_17_x86_64",
            "-d",
            str(whl),
            f"torchcodec=={torchcodec}",
            f"rapidfuzz=={version('rapidfuzz')}",
            f"pyclipper=={version('pyclipper')}",
        ],
        check=True,
    )


CHECK = """
import torch, sys
from torchcodec.encoders import VideoEncoder
from torchcodec.decoders import VideoDecoder
frames = torch.randint(0, 255, (30, 3, 64, 96), dtype=torch.uint8)
path = sys.argv[1]
VideoEncoder(frames, frame_rate=30).to_file(path, codec="libx264")
decoder = VideoDecoder(path)
assert len(decoder) == 30 and decoder.get_frames_played_at([0.0, 0.5]).data.shape == (2, 3, 64, 96)
print("torchcodec decodes and encodes H.264 with the carried libraries")
"""


def check(lib: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {"LD_LIBRARY_PATH": str(lib), "PATH": "/usr/bin:/bin"}
        print(run([sys.executable, "-c", CHECK, str(Path(tmp) / "check.mp4")], env=env), end="")
        maps = run(
            [sys.executable, "-c", "import torchcodec, sys; print(open('/proc/self/maps').read())"], env=env
        )
        loaded = {Path(p).name for p in re.findall(r"(/\S+\.so[.\d]*)$", maps, re.M)}
        ffmpeg = (
            "libavcodec.",
            "libavformat.",
            "libavutil.",
            "libavdevice.",
            "libavfilter.",
            "libswscale.",
            "libswresample.",
            "libpostproc.",
            "libx264.",
        )
        outside = sorted(n for n in loaded if n.startswith(ffmpeg) and not (lib / n).exists())
        if outside:
            raise SystemExit(f"FFmpeg libraries loaded from outside {lib}: {outside}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=REPO / ".carry" / "video")
    parser.add_argument("--torchcodec", default="0.11.*", help="torchcodec version for the machine's torch")
    parser.add_argument("--python", default="3.12", help="the machine's Python version")
    parser.add_argument("--no-wheel", action="store_true", help="skip downloading the wheels")
    args = parser.parse_args(argv)
    real = fetch(args.dest)
    stubs = make_stubs(real, args.dest / "lib")
    if not args.no_wheel:
        fetch_wheels(args.dest, args.torchcodec, args.python)
    shutil.rmtree(args.dest / "debs")
    check(args.dest / "lib")
    size = sum(p.stat().st_size for p in args.dest.rglob("*") if p.is_file())
    print(f"{args.dest}: {len(real)} real libraries, {len(stubs)} stubs, {size / 2**20:.1f} MiB in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
