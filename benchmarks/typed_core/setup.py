"""Build the typed-core prototype in place: ``python setup.py build_ext --inplace`` (needs Cython and a
C compiler; not part of the package or its build)."""

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    name="speedtrap_typed_core_prototype",
    ext_modules=cythonize(
        [
            Extension(
                "mmc_core", ["mmc_core.pyx"], include_dirs=[np.get_include()], extra_compile_args=["-O3"]
            )
        ],
        language_level=3,
    ),
)
