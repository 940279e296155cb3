# -*- Python -*-
# Configuration of the sbp lit test suite.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "SBP"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.sbp_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Unit",
                   "Inputs"]

config.substitutions.append(("%shared", config.shared_dir))
config.substitutions.append(("%sbp_src_root", config.sbp_src_root))
config.substitutions.append(("%sbp_obj_root", config.sbp_obj_root))
config.substitutions.append(
    ("%expect-exit", "%s %s" % (config.python_executable,
                                os.path.join(config.test_source_root,
                                             "expect-exit.py"))))
llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
# With -DSBP_ENABLE_SANITIZERS=ON, sbp's code is instrumented but libMLIR is
# not: LLVM's allocators, inlined into sbp's code, poison memory that the
# uninstrumented library then reads legitimately. Only real errors count.
config.environment["ASAN_OPTIONS"] = "allow_user_poisoning=0"
# sbp-run's compilation cache: the build's own, not the user's.
config.environment["SBP_CACHE_DIR"] = os.path.join(config.sbp_obj_root, "test",
                                                   "compile-cache")
llvm_config.use_default_substitutions()

tool_dirs = [config.sbp_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["sbp-opt", "sbp-run", "sbp-exec", "mlir-runner"],
                                   tool_dirs)

# MLIR's runtime libraries for programs run by mlir-runner.
llvm_lib_dir = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
for name in ("mlir_c_runner_utils", "mlir_runner_utils"):
    config.substitutions.append(
        ("%" + name, os.path.join(llvm_lib_dir, "lib" + name + ".so")))

# The runtime's MPI backend, run under mpirun.
if config.sbp_have_mpi.upper() in ("TRUE", "ON", "1") and config.mpiexec:
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun", config.mpiexec))

# ONNX: Debian's node test suite with python3-onnx, and the model tests'
# environment (scripts/python-venv.sh).
config.substitutions.append(("%debian_python", "/usr/bin/python3"))
onnx_data = "/usr/share/libonnx-testdata/data/node"
if os.path.isdir(onnx_data) and os.path.isdir(
        "/usr/lib/python3/dist-packages/onnx"):
    config.available_features.add("onnx-testdata")
venv_python = os.path.join(config.sbp_obj_root, "venv", "bin", "python")
if os.path.exists(venv_python):
    config.available_features.add("model-venv")
    config.substitutions.append(("%venv_python", venv_python))

# The GPU backend. `cuda-toolkit`: kernels link libdevice (math functions).
# `ptxas`: the toolkit's assembler checks the emitted PTX.
# `cuda-runtime`: sbp-run has the cuda backend. `cuda-driver`: a GPU driver
# is installed, so programs run on the GPU (never on CI machines).
libdevice = os.path.join(config.cuda_toolkit, "nvvm", "libdevice",
                         "libdevice.10.bc")
if config.cuda_toolkit and os.path.exists(libdevice):
    config.available_features.add("cuda-toolkit")
ptxas = os.path.join(config.cuda_toolkit, "bin", "ptxas")
if config.cuda_toolkit and os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
if config.sbp_have_cuda.upper() in ("TRUE", "ON", "1"):
    config.available_features.add("cuda-runtime")
    try:
        import ctypes
        ctypes.CDLL(os.environ.get("SBP_CUDA_DRIVER") or "libcuda.so.1")
        config.available_features.add("cuda-driver")
    except OSError:
        pass
for name in ("SBP_CUDA_DRIVER", "SBP_CUBLAS_LIBRARY", "SBP_NCCL_LIBRARY",
             "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
