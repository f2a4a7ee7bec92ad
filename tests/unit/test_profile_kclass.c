/* test_profile_kclass.c - kernel classification on kernel names as CUPTI reports them from PyTorch,
 * cuBLAS, cuDNN, CUTLASS, inductor's Triton, cub and thrust, and from candidates; short names. */
#include "testutil.h"

#include "profile/kclass.h"

struct named {
	const char *name;
	const char *library;     /* NULL: custom */
	int pytorch_compute;
};

static const struct named names[] = {
	/* PyTorch's own */
	{ "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
	  "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)", "aten", 0 },
	{ "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar("
	  "at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
	  "const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, "
	  "at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
	  "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::"
	  "{lambda(float)#1}, std::array<char*, 2ul>)", "aten", 1 },
	{ "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda"
	  "(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>"
	  "(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
	  "const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::"
	  "gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() "
	  "const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::"
	  "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
	  "const::{lambda(float)#1} const&)::{lambda(int)#1})", "aten", 0 },
	{ "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
	  "namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)", "aten", 1 },
	{ "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<4u>, "
	  "unsigned int, 2, 128, 1>(at::native::(anonymous namespace)::OpaqueType<4u>*, at::native::(anonymous namespace)::"
	  "CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 128, 1>, "
	  "at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)", "aten", 0 },
	{ "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, "
	  "at::native::templates::cuda::uniform_and_transform<float, float, at::CUDAGeneratorImpl*>(...)", "aten", 0 },
	{ "void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<at_cuda_detail::cub::DeviceRadixSortPolicy<float, long, "
	  "int>::Policy800, false, float, long, int, int, at_cuda_detail::cub::detail::identity_decomposer_t>(int*, int*, "
	  "int*, int const*, float*, float const*, long*, long const*, int, int, int, "
	  "at_cuda_detail::cub::detail::identity_decomposer_t)", "aten", 1 },
	{ "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t, "
	  "Flash_kernel_traits<64, 128, 128, 4, cutlass::half_t> >, false, true, false, false, true, true, false, false>"
	  "(pytorch_flash::Flash_fwd_params)", "aten", 1 },
	{ "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, true, "
	  "64, 64, 64, true, true>::Params)", "aten", 1 },
	{ "triton_poi_fused_add_relu_0", "triton", 1 },
	{ "triton_red_fused__softmax_0", "triton", 1 },
	{ "triton_per_fused_native_layer_norm_0", "triton", 1 },
	{ "triton_tem_fused_addmm_relu_0", "triton", 1 },
	/* vendor libraries */
	{ "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
	  "cuBLAS", 0 },
	{ "ampere_sgemm_128x64_tn", "cuBLAS", 0 },
	{ "volta_sgemm_128x32_nn", "cuBLAS", 0 },
	{ "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize160x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel", "cuBLAS", 0 },
	{ "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>("
	  "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)", "cuBLAS", 0 },
	{ "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, cublasGemvParamsEx<int, "
	  "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
	  "cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float "
	  "const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>, float, float)",
	  "cuBLAS", 0 },
	{ "void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>(cublasSplitKParams<float>, "
	  "float const*, float const*, float*, float const*, float const*, float const*, float const*, float*, void*, long, "
	  "float*, int*)", "cuBLAS", 0 },
	{ "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, false, false, true, false>("
	  "cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, "
	  "float const*, float const*, float*, void*, long, float*, int*)", "cuBLASLt", 0 },
	{ "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_"
	  "tensor16x8x8_kernel", "cuDNN", 0 },
	{ "void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, false, false, 0, int, float, float, float, float, "
	  "float, float>(cudnn::cnn::GroupedDirectFpropParams, float const*, float const*, float*, float, float*, float const*, "
	  "float const*, float)", "cuDNN", 0 },
	{ "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, float const*, "
	  "int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, "
	  "float const*, bool, int, int)", "cuDNN", 0 },
	{ "void nchwToNhwcKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>(int, int, int, int, float const*, "
	  "float*, float, float)", "cuDNN", 0 },
	{ "void cub::CUB_200302_900_NS::DeviceReduceSingleTileKernel<cub::CUB_200302_900_NS::DeviceReducePolicy<float, int, "
	  "cuda::std::__4::plus<float> >::Policy600, float*, float*, int, cuda::std::__4::plus<float>, float, float>(float*, "
	  "float*, int, cuda::std::__4::plus<float>, float)", "cub", 0 },
	{ "void thrust::cuda_cub::core::_kernel_agent<thrust::cuda_cub::__parallel_for::ParallelForAgent<thrust::cuda_cub::"
	  "__fill::functor<thrust::device_ptr<float>, float>, unsigned long>, thrust::cuda_cub::__fill::functor<"
	  "thrust::device_ptr<float>, float>, unsigned long>(thrust::cuda_cub::__fill::functor<thrust::device_ptr<float>, "
	  "float>, unsigned long)", "thrust", 0 },
	{ "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, "
	  "cutlass::gemm::collective::CollectiveMma<...> > >(cutlass::gemm::kernel::GemmUniversal<...>::Params)",
	  "CUTLASS", 0 },
	{ "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "NCCL", 0 },
	{ "void regular_fft<256u, EPT_8, 32u, 8u, (padding_t)1, (twiddle_t)0, (loadstore_modifier_t)2, (layout_t)1, unsigned "
	  "int, float>(kernel_arguments_t<unsigned int>)", "cuFFT", 0 },
	/* candidates */
	{ "relu_kernel(float const*, float*, int)", NULL, 0 },
	{ "fused_gemm_bias_relu", NULL, 0 },
	{ "void my_softmax<256>(float const*, float*, int)", NULL, 0 },
	{ "add_kernel", NULL, 0 },                          /* a candidate's own @triton.jit kernel */
	{ "void (anonymous namespace)::conv_tile_kernel<16>(float const*, float*)", NULL, 0 },
	{ "gemm_tiled_kernel(float const*, float const*, float*, int, int, int)", NULL, 0 },
	{ "void sm90_style_gemm<128>(float*)", NULL, 0 },    /* a name that only looks like an arch prefix */
	{ "winograd_conv_kernel(float const*, float*)", NULL, 0 },
};

static void classifies_real_world_kernel_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct kclass k;
		kclass_of(names[i].name, &k);
		if (names[i].library) {
			if (k.custom || !k.library || strcmp(k.library, names[i].library))
				fail_msg("%s: expected %s, got %s", names[i].name, names[i].library, k.custom ? "custom" : k.library);
		} else if (!k.custom || k.library) {
			fail_msg("%s: expected custom, got %s", names[i].name, k.library);
		}
		if (k.pytorch_compute != names[i].pytorch_compute)
			fail_msg("%s: pytorch_compute %d, expected %d", names[i].name, k.pytorch_compute, names[i].pytorch_compute);
	}
}

static void template_libraries_are_instantiable_vendor_kernels_are_not(void **state)
{
	(void)state;
	struct kclass k;
	kclass_of("void cub::CUB_200302_900_NS::DeviceScanKernel<int>(int*)", &k);
	assert_true(k.instantiable);
	kclass_of("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(int)", &k);
	assert_false(k.instantiable); /* cuBLAS's own CUTLASS build */
	kclass_of("void at_cuda_detail::cub::DeviceScanKernel<int>(int*)", &k);
	assert_false(k.instantiable);
}

static void the_candidates_objects_claim_its_template_kernels(void **state)
{
	(void)state;
	char *dir = tmpdir_make();
	/* an extension's bytes hold its kernels' mangled names NUL-terminated (registration strings) */
	char *path = xstrfmt("%s/ext.so", dir);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	static const char blob[] = "\177ELF...._ZN3cub11EmptyKernelIvEEvv\0..._Z11relu_kernelPKfPfi\0tail";
	fwrite(blob, 1, sizeof(blob), f);
	fclose(f);
	const char *paths[] = { path, "/nonexistent.so" };
	struct kclass_objects o;
	kclass_objects_load(&o, paths, 2);
	assert_int_equal(o.n, 1);
	assert_true(kclass_objects_contain(&o, "_ZN3cub11EmptyKernelIvEEvv"));
	assert_true(kclass_objects_contain(&o, "_Z11relu_kernelPKfPfi"));
	assert_false(kclass_objects_contain(&o, "_Z11relu_kernelPKfPf")); /* a prefix is not the symbol */
	assert_false(kclass_objects_contain(&o, "_ZN2at6native6kernelEv"));
	kclass_objects_release(&o);
	free(path);
	tmpdir_remove(dir);
}

static void short_names_drop_return_types_parameters_and_namespaces(void **state)
{
	(void)state;
	char *s = kname_short("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
			      "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)", 200);
	assert_string_equal(s, "vectorized_elementwise_kernel<4, FillFunctor<float>, array<char*, 1ul> >");
	free(s);
	s = kname_short("relu_kernel(float const*, float*, int)", 200);
	assert_string_equal(s, "relu_kernel");
	free(s);
	s = kname_short("void (anonymous namespace)::conv_tile_kernel<16>(float const*, float*)", 200);
	assert_string_equal(s, "conv_tile_kernel<16>");
	free(s);
	s = kname_short("ampere_sgemm_128x64_tn", 200);
	assert_string_equal(s, "ampere_sgemm_128x64_tn");
	free(s);
	s = kname_short("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_"
			"kernel__5x_cublas", 40);
	assert_int_equal(strlen(s), 40);
	assert_string_equal(s + 37, "...");
	assert_memory_equal(s, "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n", 37);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classifies_real_world_kernel_names),
		cmocka_unit_test(template_libraries_are_instantiable_vendor_kernels_are_not),
		cmocka_unit_test(the_candidates_objects_claim_its_template_kernels),
		cmocka_unit_test(short_names_drop_return_types_parameters_and_namespaces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
