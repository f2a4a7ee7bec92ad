// CPU kernels for stitchbench's runtime corpus: plain C++ loops over contiguous fp32 data, each returning
// a new tensor; at::parallel_for splits the ReLU across torch's own thread pool.
#include <torch/extension.h>
#include <cmath>
#include <vector>

static void check_f32(const torch::Tensor &x, const char *what) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, what, ": expected float32");
    TORCH_CHECK(x.is_contiguous(), what, ": expected a contiguous tensor");
}

torch::Tensor relu(torch::Tensor x) {
    check_f32(x, "relu");
    auto y = torch::empty_like(x);
    const float *in = x.data_ptr<float>();
    float *out = y.data_ptr<float>();
    for (int64_t i = 0, n = x.numel(); i < n; i++)
        out[i] = in[i] > 0.f ? in[i] : 0.f;
    return y;
}

torch::Tensor relu_parallel(torch::Tensor x) {
    check_f32(x, "relu_parallel");
    auto y = torch::empty_like(x);
    const float *in = x.data_ptr<float>();
    float *out = y.data_ptr<float>();
    at::parallel_for(0, x.numel(), 1 << 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; i++)
            out[i] = in[i] > 0.f ? in[i] : 0.f;
    });
    return y;
}

// ReLU written transposed into out (n x n), so out.t() holds relu(x): a non-contiguous result.
void relu_transposed_into(torch::Tensor x, torch::Tensor out) {
    check_f32(x, "relu_transposed_into");
    const int64_t n = x.size(0);
    TORCH_CHECK(x.dim() == 2 && x.size(1) == n && out.sizes() == x.sizes(), "square matrices expected");
    const float *in = x.data_ptr<float>();
    float *o = out.data_ptr<float>();
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            float v = in[i * n + j];
            o[j * n + i] = v > 0.f ? v : 0.f;
        }
}

bool all_nonnegative(torch::Tensor x) {
    check_f32(x, "all_nonnegative");
    const float *in = x.data_ptr<float>();
    for (int64_t i = 0, n = x.numel(); i < n; i++)
        if (!(in[i] >= 0.f))
            return false;
    return true;
}

// acc += relu(x), in place.
void add_relu_into(torch::Tensor acc, torch::Tensor x) {
    check_f32(x, "add_relu_into");
    check_f32(acc, "add_relu_into");
    const float *in = x.data_ptr<float>();
    float *a = acc.data_ptr<float>();
    for (int64_t i = 0, n = x.numel(); i < n; i++)
        a[i] += in[i] > 0.f ? in[i] : 0.f;
}

static void softmax_rows(const float *in, float *out, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        const float *x = in + r * cols;
        float *y = out + r * cols;
        float m = x[0];
        for (int64_t c = 1; c < cols; c++)
            m = x[c] > m ? x[c] : m;
        double s = 0;
        for (int64_t c = 0; c < cols; c++) {
            float e = std::exp(x[c] - m);
            y[c] = e;
            s += e;
        }
        const float inv = (float)(1.0 / s);
        for (int64_t c = 0; c < cols; c++)
            y[c] *= inv;
    }
}

torch::Tensor softmax_lastdim(torch::Tensor x) {
    check_f32(x, "softmax_lastdim");
    auto y = torch::empty_like(x);
    const int64_t cols = x.size(-1);
    softmax_rows(x.data_ptr<float>(), y.data_ptr<float>(), x.numel() / cols, cols);
    return y;
}

// The same softmax, written over its own input.
void softmax_lastdim_inplace(torch::Tensor x) {
    check_f32(x, "softmax_lastdim_inplace");
    const int64_t cols = x.size(-1);
    std::vector<float> row(cols);
    float *p = x.data_ptr<float>();
    for (int64_t r = 0, rows = x.numel() / cols; r < rows; r++) {
        softmax_rows(p + r * cols, row.data(), 1, cols);
        std::copy(row.begin(), row.end(), p + r * cols);
    }
}

// x: [B, R, C] -> [B, 1, C], the sum over R.
torch::Tensor sum_dim1(torch::Tensor x) {
    check_f32(x, "sum_dim1");
    TORCH_CHECK(x.dim() == 3, "sum_dim1: expected 3 dimensions");
    const int64_t B = x.size(0), R = x.size(1), C = x.size(2);
    auto y = torch::empty({B, 1, C}, x.options());
    const float *in = x.data_ptr<float>();
    float *out = y.data_ptr<float>();
    std::vector<double> acc(C);
    for (int64_t b = 0; b < B; b++) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t r = 0; r < R; r++)
            for (int64_t c = 0; c < C; c++)
                acc[c] += in[(b * R + r) * C + c];
        for (int64_t c = 0; c < C; c++)
            out[b * C + c] = (float)acc[c];
    }
    return y;
}

torch::Tensor layernorm_lastdim(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    check_f32(x, "layernorm_lastdim");
    const int64_t cols = x.size(-1), rows = x.numel() / cols;
    auto y = torch::empty_like(x);
    auto wc = w.contiguous(), bc = b.contiguous();
    const float *in = x.data_ptr<float>(), *pw = wc.data_ptr<float>(), *pb = bc.data_ptr<float>();
    float *out = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; r++) {
        const float *v = in + r * cols;
        double mean = 0, var = 0;
        for (int64_t c = 0; c < cols; c++)
            mean += v[c];
        mean /= cols;
        for (int64_t c = 0; c < cols; c++)
            var += (v[c] - mean) * (v[c] - mean);
        const double inv = 1.0 / std::sqrt(var / cols + eps);
        for (int64_t c = 0; c < cols; c++)
            out[r * cols + c] = (float)((v[c] - mean) * inv) * pw[c] + pb[c];
    }
    return y;
}

torch::Tensor gather_rows(torch::Tensor ids, torch::Tensor table) {
    TORCH_CHECK(ids.scalar_type() == torch::kInt64, "gather_rows: ids must be int64");
    auto t = table.contiguous();
    auto idc = ids.contiguous();
    const int64_t dim = t.size(1), vocab = t.size(0);
    std::vector<int64_t> shape(idc.sizes().begin(), idc.sizes().end());
    shape.push_back(dim);
    auto y = torch::empty(shape, t.options());
    const int64_t *id = idc.data_ptr<int64_t>();
    const float *src = t.data_ptr<float>();
    float *out = y.data_ptr<float>();
    for (int64_t i = 0, n = idc.numel(); i < n; i++) {
        TORCH_CHECK(id[i] >= 0 && id[i] < vocab, "gather_rows: id out of range");
        std::copy(src + id[i] * dim, src + (id[i] + 1) * dim, out + i * dim);
    }
    return y;
}

// sigmoid(mean(tanh(x[b]))) per sample.
torch::Tensor tanh_mean_sigmoid(torch::Tensor x) {
    check_f32(x, "tanh_mean_sigmoid");
    const int64_t B = x.size(0), per = x.numel() / B;
    auto y = torch::empty({B}, x.options());
    const float *in = x.data_ptr<float>();
    float *out = y.data_ptr<float>();
    for (int64_t b = 0; b < B; b++) {
        double s = 0;
        for (int64_t i = 0; i < per; i++)
            s += std::tanh(in[b * per + i]);
        out[b] = (float)(1.0 / (1.0 + std::exp(-s / per)));
    }
    return y;
}

// x + gelu(x) * mask, the GELU exact (erf); mask already scaled by 1 / (1 - p).
torch::Tensor gelu_mask_residual(torch::Tensor x, torch::Tensor mask) {
    check_f32(x, "gelu_mask_residual");
    check_f32(mask, "gelu_mask_residual");
    auto y = torch::empty_like(x);
    const float *in = x.data_ptr<float>(), *m = mask.data_ptr<float>();
    float *out = y.data_ptr<float>();
    for (int64_t i = 0, n = x.numel(); i < n; i++) {
        const float v = in[i];
        const float g = 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
        out[i] = v + g * m[i];
    }
    return y;
}

// y = tanh(W_L(... tanh(W_1 x + b_1) ...) + b_L) for a batch of rows, all layers in one call.
torch::Tensor mlp_tanh(torch::Tensor x, std::vector<torch::Tensor> weights, std::vector<torch::Tensor> biases) {
    check_f32(x, "mlp_tanh");
    const int64_t rows = x.size(0);
    std::vector<float> cur(x.data_ptr<float>(), x.data_ptr<float>() + x.numel()), next;
    int64_t width = x.size(1);
    for (size_t l = 0; l < weights.size(); l++) {
        auto w = weights[l].contiguous();
        auto b = biases[l].contiguous();
        const int64_t outw = w.size(0);
        const float *pw = w.data_ptr<float>(), *pb = b.data_ptr<float>();
        next.assign(rows * outw, 0.f);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t o = 0; o < outw; o++) {
                float s = pb[o];
                for (int64_t i = 0; i < width; i++)
                    s += cur[r * width + i] * pw[o * width + i];
                next[r * outw + o] = std::tanh(s);
            }
        cur.swap(next);
        width = outw;
    }
    auto y = torch::empty({rows, width}, x.options());
    std::copy(cur.begin(), cur.end(), y.data_ptr<float>());
    return y;
}
