"""A cache hint for numba kernels: ``prefetch(arr, k)`` asks the CPU to load the cache line of ``arr``'s element k
ahead of its use (the loops that gather rows or labels by a random index, :mod:`hpstrat_lite.engine.kernels` and
:mod:`hpstrat_lite.core._split_kernels`)."""
from __future__ import annotations

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

#: Bytes of a cache line (x86-64 and most ARM cores).
LINE_BYTES = 64


@intrinsic
def prefetch(typingctx, arr, offset):
    """``prefetch(arr, k)``: a hint (x86 ``prefetcht0``, LLVM's ``llvm.prefetch``) that the cache line holding
    element ``k`` of the C-contiguous array ``arr`` (flat index) will be read soon. No effect on any value."""
    if not isinstance(arr, types.Array) or arr.layout != "C" or not isinstance(offset, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        address = builder.gep(ary.data, [context.cast(builder, args[1], signature.args[1], types.intp)])
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        # named by llvmlite for its LLVM: llvm.prefetch.p0i8 (typed pointers) or .p0 (opaque ones)
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]))
        builder.call(fn, [builder.bitcast(address, i8p), i32(0), i32(3), i32(1)])  # read, keep in all levels, data
        return context.get_dummy_value()

    return types.void(arr, offset), codegen
