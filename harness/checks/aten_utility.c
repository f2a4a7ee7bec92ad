/* aten_utility.c - the ATen operators that compute nothing the benchmark measures (aten_utility.h). */
#include "aten_utility.h"

#include <stddef.h>

/* What a kernel of the candidate's own does around its work; the same kinds the source rules allow
 * (docs/checks.md, H01: torch.empty/zeros, .contiguous(), cat, arange, rand*, bernoulli_, a dropout mask
 * drawn as the reference draws it). */
const char *const sb_aten_utility[] = {
	/* allocation */
	"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "new_zeros",
	"ones", "ones_like", "new_ones", "full", "full_like", "new_full", "scalar_tensor", "arange",
	/* fills, copies and conversion */
	"fill", "fill_", "zero", "zero_", "copy", "copy_", "_copy_from", "_copy_from_and_resize", "clone", "contiguous",
	"to", "_to_copy", "type_as", "detach", "detach_", "alias", "lift", "lift_fresh", "lift_fresh_copy", "resize",
	"resize_", "resize_as", "resize_as_", "set", "set_", "item", "_local_scalar_dense", "pin_memory", "_pin_memory",
	"record_stream",
	/* views, shape, joining */
	"view", "view_as", "reshape", "reshape_as", "_reshape_alias", "_unsafe_view", "as_strided", "as_strided_",
	"expand", "expand_as", "transpose", "transpose_", "t", "permute", "movedim", "swapaxes", "select", "slice",
	"narrow", "squeeze", "squeeze_", "unsqueeze", "unsqueeze_", "flatten", "unflatten", "unfold", "split",
	"split_with_sizes", "chunk", "unbind", "cat", "stack",
	/* random draws */
	"rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm", "uniform", "uniform_",
	"normal", "normal_", "random", "random_", "bernoulli", "bernoulli_", "exponential_", "geometric_",
	"log_normal_", "cauchy_",
	/* metadata and autograd flags */
	"size", "stride", "numel", "dim", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_contiguous",
	"is_nonzero", "is_pinned", "result_type", "requires_grad", "requires_grad_", "retain_grad",
	"_has_compatible_shallow_copy_type",
	NULL,
};
