/* rules_names.c - the names the static rules classify: torch.Tensor's methods that compute and those that
 * only describe, allocate, move or reshape, the other PyTorch op names, and torch's own helper functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/strbuf.h"
#include "rules.h"

/* torch.X that only allocate, reshape, move or configure: not the work being benchmarked. */
const char *const sb_torch_free[] = {
	"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
	"arange", "range", "linspace", "logspace", "tensor", "as_tensor", "asarray", "as_strided", "from_numpy",
	"frombuffer", "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm",
	"manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "is_tensor", "is_floating_point",
	"is_complex", "numel", "result_type", "promote_types", "can_cast", "finfo", "iinfo", "get_default_dtype",
	"set_default_dtype", "no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "is_grad_enabled",
	"is_inference_mode_enabled", "device", "dtype", "cat", "concat", "concatenate", "stack", "hstack",
	"vstack", "split", "tensor_split", "chunk", "narrow", "reshape", "flatten", "unflatten", "squeeze",
	"unsqueeze", "transpose", "swapaxes", "swapdims", "permute", "movedim", "moveaxis", "t", "broadcast_to",
	"broadcast_tensors", "broadcast_shapes", "atleast_1d", "atleast_2d", "atleast_3d", "view_as_real",
	"view_as_complex", "clone", "get_device", "set_num_threads", "get_num_threads", "use_deterministic_algorithms",
	"set_printoptions", "is_nonzero", "save", "load", "autocast", "set_float32_matmul_precision",
	"get_float32_matmul_precision", "empty_cache", "unbind", "from_blob", "scalar_tensor", NULL,
};

/* The methods of torch.Tensor (torch 1.13's dir() and the few later additions) split in two: those that
 * compute (arithmetic dunders included, since x.__matmul__(w) is x @ w) and those that do not. Both sorted
 * for bsearch; tests/unit/test_static.c checks the order. */
const char *const sb_tensor_free[] = {
	"H", "T", "__array__", "__array_priority__", "__array_wrap__", "__bool__", "__class__", "__complex__",
	"__contains__", "__cuda_array_interface__", "__deepcopy__", "__delattr__", "__delitem__", "__dict__", "__dir__",
	"__dlpack__", "__dlpack_device__", "__doc__", "__float__", "__format__", "__getattribute__", "__getitem__",
	"__getstate__", "__hash__", "__index__", "__init__", "__init_subclass__", "__int__", "__iter__", "__len__",
	"__long__", "__module__", "__new__", "__nonzero__", "__reduce__", "__reduce_ex__", "__repr__", "__setattr__",
	"__setitem__", "__setstate__", "__sizeof__", "__str__", "__subclasshook__", "__torch_dispatch__",
	"__torch_function__", "__weakref__", "adjoint", "align_as", "align_to", "all", "any", "as_strided", "as_strided_",
	"as_subclass", "bernoulli", "bernoulli_", "bfloat16", "bool", "broadcast_to", "byte", "cauchy_", "ccol_indices",
	"cdouble", "cfloat", "chalf", "char", "chunk", "clone", "col_indices", "conj", "contiguous", "copy_", "cpu",
	"crow_indices", "cuda", "data", "data_ptr", "dense_dim", "detach", "detach_", "device", "diagonal", "dim",
	"dim_order", "double", "dsplit", "dtype", "element_size", "expand", "expand_as", "exponential_", "fill_", "flatten",
	"float", "geometric_", "get_device", "grad", "grad_fn", "half", "has_names", "hsplit", "imag", "indices", "int",
	"ipu", "is_coalesced", "is_complex", "is_conj", "is_contiguous", "is_cpu", "is_cuda", "is_distributed",
	"is_floating_point", "is_inference", "is_ipu", "is_leaf", "is_meta", "is_mkldnn", "is_mps", "is_neg", "is_nested",
	"is_nonzero", "is_ort", "is_pinned", "is_quantized", "is_same_size", "is_set_to", "is_shared", "is_signed",
	"is_sparse", "is_sparse_csr", "is_vulkan", "is_xpu", "item", "itemsize", "layout", "log_normal_", "long", "mH",
	"mT", "module_load", "moveaxis", "movedim", "name", "names", "narrow", "narrow_copy", "nbytes", "ndim",
	"ndimension", "nelement", "new", "new_empty", "new_empty_strided", "new_full", "new_ones", "new_tensor",
	"new_zeros", "normal_", "numel", "numpy", "output_nr", "permute", "pin_memory", "q_per_channel_axis",
	"q_per_channel_scales", "q_per_channel_zero_points", "q_scale", "q_zero_point", "qscheme", "random_", "ravel",
	"real", "record_stream", "refine_names", "register_hook", "rename", "rename_", "repeat", "requires_grad",
	"requires_grad_", "reshape", "reshape_as", "resize", "resize_", "resize_as", "resize_as_", "resize_as_sparse_",
	"resolve_conj", "resolve_neg", "retain_grad", "retains_grad", "row_indices", "select", "set_", "shape",
	"share_memory_", "short", "size", "sparse_dim", "split", "split_with_sizes", "squeeze", "squeeze_", "storage",
	"storage_offset", "storage_type", "stride", "swapaxes", "swapaxes_", "swapdims", "swapdims_", "t", "t_",
	"tensor_split", "tile", "to", "tolist", "transpose", "transpose_", "type", "type_as", "unbind", "unflatten",
	"unfold", "uniform_", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes", "unsqueeze", "unsqueeze_",
	"untyped_storage", "values", "view", "view_as", "volatile", "vsplit", "xpu", "zero_", NULL,
};

const char *const sb_tensor_compute[] = {
	"__abs__", "__add__", "__and__", "__div__", "__eq__", "__floordiv__", "__ge__", "__gt__", "__iadd__", "__iand__",
	"__idiv__", "__ifloordiv__", "__ilshift__", "__imod__", "__imul__", "__invert__", "__ior__", "__ipow__",
	"__irshift__", "__isub__", "__itruediv__", "__ixor__", "__le__", "__lshift__", "__lt__", "__matmul__", "__mod__",
	"__mul__", "__ne__", "__neg__", "__or__", "__pos__", "__pow__", "__radd__", "__rand__", "__rdiv__", "__reversed__",
	"__rfloordiv__", "__rlshift__", "__rmatmul__", "__rmod__", "__rmul__", "__ror__", "__rpow__", "__rrshift__",
	"__rshift__", "__rsub__", "__rtruediv__", "__rxor__", "__sub__", "__truediv__", "__xor__", "_addmm_activation",
	"abs", "abs_", "absolute", "absolute_", "acos", "acos_", "acosh", "acosh_", "add", "add_", "addbmm", "addbmm_",
	"addcdiv", "addcdiv_", "addcmul", "addcmul_", "addmm", "addmm_", "addmv", "addmv_", "addr", "addr_", "allclose",
	"amax", "amin", "aminmax", "angle", "apply_", "arccos", "arccos_", "arccosh", "arccosh_", "arcsin", "arcsin_",
	"arcsinh", "arcsinh_", "arctan", "arctan2", "arctan2_", "arctan_", "arctanh", "arctanh_", "argmax", "argmin",
	"argsort", "argwhere", "as_strided_scatter", "asin", "asin_", "asinh", "asinh_", "atan", "atan2", "atan2_", "atan_",
	"atanh", "atanh_", "backward", "baddbmm", "baddbmm_", "bincount", "bitwise_and", "bitwise_and_",
	"bitwise_left_shift", "bitwise_left_shift_", "bitwise_not", "bitwise_not_", "bitwise_or", "bitwise_or_",
	"bitwise_right_shift", "bitwise_right_shift_", "bitwise_xor", "bitwise_xor_", "bmm", "ceil", "ceil_", "cholesky",
	"cholesky_inverse", "cholesky_solve", "clamp", "clamp_", "clamp_max", "clamp_max_", "clamp_min", "clamp_min_",
	"clip", "clip_", "coalesce", "conj_physical", "conj_physical_", "copysign", "copysign_", "corrcoef", "cos", "cos_",
	"cosh", "cosh_", "count_nonzero", "cov", "cross", "cummax", "cummin", "cumprod", "cumprod_", "cumsum", "cumsum_",
	"deg2rad", "deg2rad_", "dequantize", "det", "diag", "diag_embed", "diagflat", "diagonal_scatter", "diff", "digamma",
	"digamma_", "dist", "div", "div_", "divide", "divide_", "dot", "eig", "eq", "eq_", "equal", "erf", "erf_", "erfc",
	"erfc_", "erfinv", "erfinv_", "exp", "exp2", "exp2_", "exp_", "expm1", "expm1_", "fill_diagonal_", "fix", "fix_",
	"flip", "fliplr", "flipud", "float_power", "float_power_", "floor", "floor_", "floor_divide", "floor_divide_",
	"fmax", "fmin", "fmod", "fmod_", "frac", "frac_", "frexp", "gather", "gcd", "gcd_", "ge", "ge_", "geqrf", "ger",
	"greater", "greater_", "greater_equal", "greater_equal_", "gt", "gt_", "hardshrink", "heaviside", "heaviside_",
	"histc", "histogram", "hypot", "hypot_", "i0", "i0_", "igamma", "igamma_", "igammac", "igammac_", "index_add",
	"index_add_", "index_copy", "index_copy_", "index_fill", "index_fill_", "index_put", "index_put_", "index_reduce",
	"index_reduce_", "index_select", "inner", "int_repr", "inverse", "isclose", "isfinite", "isinf", "isnan",
	"isneginf", "isposinf", "isreal", "istft", "kron", "kthvalue", "lcm", "lcm_", "ldexp", "ldexp_", "le", "le_",
	"lerp", "lerp_", "less", "less_", "less_equal", "less_equal_", "lgamma", "lgamma_", "log", "log10", "log10_",
	"log1p", "log1p_", "log2", "log2_", "log_", "log_softmax", "logaddexp", "logaddexp2", "logcumsumexp", "logdet",
	"logical_and", "logical_and_", "logical_not", "logical_not_", "logical_or", "logical_or_", "logical_xor",
	"logical_xor_", "logit", "logit_", "logsumexp", "lstsq", "lt", "lt_", "lu", "lu_solve", "map2_", "map_",
	"masked_fill", "masked_fill_", "masked_scatter", "masked_scatter_", "masked_select", "matmul", "matrix_exp",
	"matrix_power", "max", "maximum", "mean", "median", "min", "minimum", "mm", "mode", "msort", "mul", "mul_",
	"multinomial", "multiply", "multiply_", "mv", "mvlgamma", "mvlgamma_", "nan_to_num", "nan_to_num_", "nanmean",
	"nanmedian", "nanquantile", "nansum", "ne", "ne_", "neg", "neg_", "negative", "negative_", "nextafter",
	"nextafter_", "nonzero", "norm", "not_equal", "not_equal_", "orgqr", "ormqr", "outer", "pinverse", "polygamma",
	"polygamma_", "positive", "pow", "pow_", "prelu", "prod", "put", "put_", "qr", "quantile", "rad2deg", "rad2deg_",
	"reciprocal", "reciprocal_", "reinforce", "relu", "relu_", "remainder", "remainder_", "renorm", "renorm_",
	"repeat_interleave", "roll", "rot90", "round", "round_", "rsqrt", "rsqrt_", "scatter", "scatter_", "scatter_add",
	"scatter_add_", "scatter_reduce", "scatter_reduce_", "select_scatter", "sgn", "sgn_", "sigmoid", "sigmoid_", "sign",
	"sign_", "signbit", "sin", "sin_", "sinc", "sinc_", "sinh", "sinh_", "slice_scatter", "slogdet", "smm", "softmax",
	"solve", "sort", "sparse_mask", "sparse_resize_", "sparse_resize_and_clear_", "sqrt", "sqrt_", "square", "square_",
	"sspaddmm", "std", "stft", "sub", "sub_", "subtract", "subtract_", "sum", "sum_to_size", "svd", "symeig", "take",
	"take_along_dim", "tan", "tan_", "tanh", "tanh_", "to_dense", "to_mkldnn", "to_padded_tensor", "to_sparse",
	"to_sparse_bsc", "to_sparse_bsr", "to_sparse_coo", "to_sparse_csc", "to_sparse_csr", "topk", "trace",
	"triangular_solve", "tril", "tril_", "triu", "triu_", "true_divide", "true_divide_", "trunc", "trunc_", "unique",
	"unique_consecutive", "var", "vdot", "where", "xlogy", "xlogy_", NULL,
};

const char *const sb_op_extra[] = {
	"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
	"adaptive_max_pool1d_with_indices", "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices",
	"adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "affine_grid", "affine_grid_generator", "alias_copy",
	"align_tensors", "alpha_dropout", "alpha_dropout_", "as_strided_copy", "avg_pool1d", "avg_pool2d", "avg_pool3d",
	"batch_norm", "batch_norm_backward_elemt", "batch_norm_backward_reduce", "batch_norm_elemt",
	"batch_norm_gather_stats", "batch_norm_gather_stats_with_counts", "batch_norm_stats", "batch_norm_update_stats",
	"bilinear", "binary_cross_entropy", "binary_cross_entropy_with_logits", "block_diag", "bucketize", "cartesian_prod",
	"ccol_indices_copy", "cdist", "celu", "celu_", "chain_matmul", "channel_shuffle", "choose_qparams_optimized",
	"col_indices_copy", "combinations", "constant_pad_nd", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
	"conv_transpose2d", "conv_transpose3d", "convolution", "cosine_embedding_loss", "cosine_similarity",
	"cross_entropy", "crow_indices_copy", "ctc_loss", "cudnn_affine_grid_generator", "cudnn_batch_norm",
	"cudnn_convolution", "cudnn_convolution_add_relu", "cudnn_convolution_relu", "cudnn_convolution_transpose",
	"cudnn_grid_sampler", "cumulative_trapezoid", "diagonal_copy", "dropout", "dropout1d", "dropout2d", "dropout3d",
	"dropout_", "dsmm", "einsum", "elu", "elu_", "embedding", "embedding_bag", "embedding_renorm_", "expand_copy",
	"fake_quantize_per_channel_affine", "fake_quantize_per_tensor_affine", "fbgemm_linear_fp16_weight",
	"fbgemm_linear_fp16_weight_fp32_activation", "fbgemm_linear_int8_weight",
	"fbgemm_linear_int8_weight_fp32_activation", "fbgemm_linear_quantize_weight", "fbgemm_pack_gemm_matrix_fp16",
	"fbgemm_pack_quantized_matrix", "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout",
	"feature_dropout_", "fold", "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
	"fractional_max_pool3d_with_indices", "frobenius_norm", "fused_moving_avg_obs_fake_quant", "gaussian_nll_loss",
	"gelu", "glu", "gradient", "grid_sample", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "group_norm", "gru",
	"gru_cell", "gumbel_softmax", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "hinge_embedding_loss",
	"histogramdd", "hsmm", "hspmm", "huber_loss", "indices_copy", "instance_norm", "interpolate", "isin", "kl_div",
	"l1_loss", "layer_norm", "leaky_relu", "leaky_relu_", "linear", "lobpcg", "local_response_norm", "logsigmoid",
	"lp_pool1d", "lp_pool2d", "lstm", "lstm_cell", "lu_unpack", "margin_ranking_loss", "matrix_rank", "max_pool1d",
	"max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices", "max_pool3d", "max_pool3d_with_indices",
	"max_unpool1d", "max_unpool2d", "max_unpool3d", "miopen_batch_norm", "miopen_convolution",
	"miopen_convolution_add_relu", "miopen_convolution_relu", "miopen_convolution_transpose",
	"miopen_depthwise_convolution", "miopen_rnn", "mish", "mkldnn_adaptive_avg_pool2d", "mkldnn_convolution",
	"mkldnn_linear_backward_weights", "mkldnn_max_pool2d", "mkldnn_max_pool3d", "mse_loss",
	"multi_head_attention_forward", "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
	"native_batch_norm", "native_channel_shuffle", "native_dropout", "native_group_norm", "native_layer_norm",
	"native_norm", "nll_loss", "norm_except_dim", "normalize", "nuclear_norm", "one_hot", "pairwise_distance",
	"pca_lowrank", "pdist", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "quantize_per_channel",
	"quantize_per_tensor", "quantize_per_tensor_dynamic", "quantized_batch_norm", "quantized_gru", "quantized_gru_cell",
	"quantized_lstm", "quantized_lstm_cell", "quantized_max_pool1d", "quantized_max_pool2d", "quantized_rnn_relu_cell",
	"quantized_rnn_tanh_cell", "relu6", "rnn_relu", "rnn_relu_cell", "rnn_tanh", "rnn_tanh_cell", "row_indices_copy",
	"rrelu", "rrelu_", "rsub", "saddmm", "searchsorted", "segment_reduce", "select_copy", "selu", "selu_", "silu",
	"slice_copy", "smooth_l1_loss", "soft_margin_loss", "softmin", "softplus", "softshrink", "softsign", "spmm",
	"std_mean", "svd_lowrank", "t_copy", "tanhshrink", "tensordot", "threshold", "threshold_", "trapezoid", "trapz",
	"triplet_margin_loss", "triplet_margin_with_distance_loss", "unfold_copy", "upsample", "upsample_bilinear",
	"upsample_nearest", "values_copy", "vander", "var_mean", "view_copy", NULL,
};

static int by_name(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

/* n counts the names without the closing NULL */
#define SORTED_HAS(names, name) \
	(bsearch((name), (names), sizeof(names) / sizeof(*(names)) - 1, sizeof(*(names)), by_name) != NULL)

int tensor_method_computes(const char *name)
{
	return SORTED_HAS(sb_tensor_compute, name);
}

int tensor_method_free(const char *name)
{
	return SORTED_HAS(sb_tensor_free, name);
}

int torch_op_name(const char *name)
{
	return SORTED_HAS(sb_tensor_compute, name) || SORTED_HAS(sb_op_extra, name);
}

/* The op a name stands for once the spellings around it are taken off: _softmax, relu_out, add_. */
int torch_op_spelling(const char *name)
{
	char base[PV_NAME];
	static const char *const suffixes[] = { "_outf", "_out", "_symint", "_functional", "_copy", "_", NULL };
	while (*name == '_')
		name++;
	snprintf(base, sizeof(base), "%s", name);
	if (torch_op_name(base) || starts_with(base, "linalg_") || starts_with(base, "special_") ||
	    starts_with(base, "fft_") || starts_with(base, "cudnn_") || starts_with(base, "miopen_") ||
	    starts_with(base, "mkldnn_") || starts_with(base, "native_"))
		return 1;
	for (const char *const *s = suffixes; *s; s++)
		if (ends_with(base, *s) && strlen(base) > strlen(*s)) {
			base[strlen(base) - strlen(*s)] = '\0';
			if (torch_op_name(base))
				return 1;
			snprintf(base, sizeof(base), "%s", name);
		}
	return 0;
}
