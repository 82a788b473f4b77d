"""OpenCL-driver preload for the TensorFlow suites (no pytest, no
TensorFlow: imported by conftest and by the child interpreters it starts)."""
import glob
import os


def icd_libraries():
    """The OpenCL drivers the ICD loader would open (ocl-icd's rules)."""
    if os.environ.get("OCL_ICD_FILENAMES"):
        return [f for f in os.environ["OCL_ICD_FILENAMES"].split(":") if f]
    vendors = os.environ.get("OCL_ICD_VENDORS", "/etc/OpenCL/vendors")
    libs = []
    for icd in sorted(glob.glob(os.path.join(vendors, "*.icd"))):
        with open(icd) as f:
            name = f.read().strip()
        if name:
            libs.append(name)
    return libs


def preload_icds():
    """Work-around for the LLVM clash (see README, TensorFlow section): open
    the OpenCL drivers RTLD_LOCAL before TensorFlow exports its own LLVM
    into the global scope. PoCL's libclang-cpp/libLLVM-15 constructors
    otherwise bind to TensorFlow's LLVM and crash in
    llvm::cl::Option::addArgument. test_import_without_preload checks the
    plugin without it. TFOCL_TEST_NO_PRELOAD=1 turns it off here."""
    import ctypes
    if os.environ.get("TFOCL_TEST_NO_PRELOAD") == "1":
        return []
    done = []
    for lib in icd_libraries():
        try:
            ctypes.CDLL(lib, mode=os.RTLD_LOCAL | os.RTLD_NOW)
            done.append(lib)
        except OSError:
            pass
    return done
