"""Build the kcast Python package: the C extension kcast._kcast over libkcast.

The extension links the static libkcast.a of the repository's build folder
(KCAST_BUILD, default ../build; made with `make` when it is missing), so the
installed package needs neither the repository nor a GPU nor the CUDA
toolkit to import.  `pip install ./python` or `make python`.
"""
import os
import subprocess
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.abspath(os.environ.get("KCAST_BUILD", os.path.join(ROOT, "build")))
LIB = os.path.join(BUILD, "libkcast.a")


def version():
    with open(os.path.join(ROOT, "include", "kcast.h")) as f:
        for line in f:
            if line.startswith("#define KCAST_VERSION_STRING"):
                return line.split('"')[1]
    raise RuntimeError("include/kcast.h has no KCAST_VERSION_STRING")


if not os.path.exists(LIB) and any(a.startswith(("build", "bdist", "install", "develop", "editable"))
                                    for a in sys.argv[1:]):
    # the library first, with the repository's one build
    subprocess.check_call(["make", "-C", ROOT, "BUILD=" + BUILD, os.path.join(BUILD, "libkcast.a")])

ext = Extension(
    "kcast._kcast",
    sources=[os.path.join("kcast", "_kcast.c")],
    include_dirs=[os.path.join(ROOT, "include")],
    extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                        "-Wno-missing-field-initializers", "-Wno-cast-function-type"],
    extra_objects=[LIB],
    # relinked when the library or the header changes (setuptools looks
    # only at the sources otherwise: a stale extension with an old library)
    depends=[LIB, os.path.join(ROOT, "include", "kcast.h")],
    libraries=["sqlite3", "cjson", "csv", "z", "lz4", "stdc++", "m", "dl", "pthread"],
    # libkcast's own symbols stay inside the extension
    extra_link_args=["-fopenmp", "-Wl,--exclude-libs,ALL"],
)

setup(
    name="kcast",
    version=version(),
    description="Predict the time and power of CUDA kernel launches without a GPU",
    packages=["kcast"],
    package_data={"kcast": ["py.typed"]},
    ext_modules=[ext],
    python_requires=">=3.10",
    install_requires=["numpy"],
    extras_require={"pandas": ["pandas"], "sklearn": ["scikit-learn"]},
)
