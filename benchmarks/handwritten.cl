// Hand-written OpenCL twins of the paper's applications, the yardsticks of `python -m benchmarks`.
//
// Each is written the way a programmer would write it without lift: the BLAS kernels as float4
// chunked reductions (one work-item per contiguous chunk, then one work-item sums the partials);
// gemv as a row per work-item and as a work-group per row with a local-memory tree; BlackScholes as
// NVIDIA's OpenCL SDK writes it (a polynomial cumulative normal, a grid-stride loop over options);
// MD as SHOC writes it (one work-item per atom, the neighbour list stored neighbour-major). The
// kernels after MD serve `benchmarks.bench_contenders` and `bench_matmul`: a streaming copy, the
// Jacobi stencils, all-pairs N-body and a register-blocked matrix multiply.

kernel void scal4(const float a, global const float4* x, global float4* out) {  // out may be x (in place)
    size_t i = get_global_id(0);
    out[i] = a * x[i];
}

// Partial sums of |x| over chunks of `chunk` float4s (the last chunk may be short).
kernel void asum_chunks(global const float4* restrict x, global float4* restrict partial, const int n4,
                        const int chunk) {
    int g = get_global_id(0);
    int end = min(n4, (g + 1) * chunk);
    float4 acc = (float4)(0.0f);
    for (int i = g * chunk; i < end; i++) acc += fabs(x[i]);
    partial[g] = acc;
}

// Partial sums of x*y over chunks of `chunk` float4s.
kernel void dot_chunks(global const float4* restrict x, global const float4* restrict y,
                       global float4* restrict partial, const int n4, const int chunk) {
    int g = get_global_id(0);
    int end = min(n4, (g + 1) * chunk);
    float4 acc = (float4)(0.0f);
    for (int i = g * chunk; i < end; i++) acc += x[i] * y[i];
    partial[g] = acc;
}

// The second stage of both reductions: one work-item sums `n` partials.
kernel void sum_partials(global const float* restrict partial, global float* restrict out, const int n) {
    float acc = 0.0f;
    for (int i = 0; i < n; i++) acc += partial[i];
    out[0] = acc;
}

// gemv, a row per work-item: out[r] = a * dot(A[r], x) + b * y[r], the row read as float4s.
kernel void gemv_rows(global const float4* restrict A, global const float4* restrict x,
                      global const float* restrict y, global float* restrict out, const float a, const float b,
                      const int n4) {
    int r = get_global_id(0);
    global const float4* row = A + (size_t)r * n4;
    float4 acc = (float4)(0.0f);
    for (int i = 0; i < n4; i++) acc += row[i] * x[i];
    out[r] = a * (acc.x + acc.y + acc.z + acc.w) + b * y[r];
}

// gemv, a work-group per row: each work-item sums a strided share of the row's float4s, then a tree
// in local memory (the work-group size a power of two).
kernel void gemv_groups(global const float4* restrict A, global const float4* restrict x,
                        global const float* restrict y, global float* restrict out, const float a, const float b,
                        const int n4, local float* scratch) {
    int r = get_group_id(0), l = get_local_id(0), size = get_local_size(0);
    global const float4* row = A + (size_t)r * n4;
    float4 acc = (float4)(0.0f);
    for (int i = l; i < n4; i += size) acc += row[i] * x[i];
    scratch[l] = acc.x + acc.y + acc.z + acc.w;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int active = size / 2; active > 0; active /= 2) {
        if (l < active) scratch[l] += scratch[l + active];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[r] = a * scratch[0] + b * y[r];
}

// The cumulative normal distribution by the polynomial of Abramowitz and Stegun (26.2.17), as NVIDIA's SDK.
float cnd(float d) {
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f, A5 = 1.330274429f;
    const float RSQRT2PI = 0.39894228040143267793994605993438f;
    float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float c = RSQRT2PI * exp(-0.5f * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
    return d > 0.0f ? 1.0f - c : c;
}

// NVIDIA's SDK BlackScholes: a grid-stride loop over options, calls and puts in separate arrays.
kernel void black_scholes(global float* restrict call, global float* restrict put, global const float* restrict s,
                          const float strike, const float years, const float rate, const float volatility,
                          const int n) {
    float sqrt_t = sqrt(years);
    float discounted = strike * exp(-rate * years);
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        float d1 = (log(s[i] / strike) + (rate + 0.5f * volatility * volatility) * years) / (volatility * sqrt_t);
        float d2 = d1 - volatility * sqrt_t;
        float cnd_d1 = cnd(d1), cnd_d2 = cnd(d2);
        call[i] = s[i] * cnd_d1 - discounted * cnd_d2;
        put[i] = discounted * (1.0f - cnd_d2) - s[i] * (1.0f - cnd_d1);
    }
}

// SHOC's MD: the Lennard-Jones force on each atom from its neighbours within the cutoff; neighbour j of
// atom i is at neighbours[j * atoms + i], so that on a GPU neighbouring work-items read neighbouring indices.
kernel void md_lj_force(global float4* restrict force, global const float4* restrict position,
                        global const int* restrict neighbours, const int neighbour_count, const int atoms,
                        const float cutoff_sq, const float lj1, const float lj2) {
    int i = get_global_id(0);
    float4 p = position[i];
    float4 f = (float4)(0.0f);
    for (int j = 0; j < neighbour_count; j++) {
        float4 q = position[neighbours[j * atoms + i]];
        float dx = p.x - q.x, dy = p.y - q.y, dz = p.z - q.z;
        float r2 = dx * dx + dy * dy + dz * dz;
        if (r2 < cutoff_sq) {
            float r2inv = 1.0f / r2;
            float r6inv = r2inv * r2inv * r2inv;
            float c = r2inv * r6inv * (lj1 * r6inv - lj2);
            f.x += dx * c;
            f.y += dy * c;
            f.z += dz * c;
        }
    }
    force[i] = f;
}

// MD, 8 atoms per work-item in the lanes of float8s (a struct of vectors across atoms), on lift's layout of the
// neighbour list (atom i's row at neighbours[i * count]): lane j of step k gathers the position of neighbour k of atom
// 8i + j, one float4 load per lane; the cutoff a select. Atoms a multiple of 8.
#define MD_GATHER8(n, c) (float8)(position[n.s0].c, position[n.s1].c, position[n.s2].c, position[n.s3].c, \
                                  position[n.s4].c, position[n.s5].c, position[n.s6].c, position[n.s7].c)
kernel void md_lanes8(global const float4* restrict position, global const int* restrict neighbours,
                      global float4* restrict force, const int count, const float cutoff_sq,
                      const float lj1, const float lj2) {
    int i = 8 * get_global_id(0);
    int8 self = i + (int8)(0, 1, 2, 3, 4, 5, 6, 7), row = self * count;
    float8 px = MD_GATHER8(self, x), py = MD_GATHER8(self, y), pz = MD_GATHER8(self, z);
    float8 fx = 0.0f, fy = 0.0f, fz = 0.0f;
    for (int k = 0; k < count; k++) {
        int8 n = (int8)(neighbours[row.s0 + k], neighbours[row.s1 + k], neighbours[row.s2 + k],
                        neighbours[row.s3 + k], neighbours[row.s4 + k], neighbours[row.s5 + k],
                        neighbours[row.s6 + k], neighbours[row.s7 + k]);
        float8 dx = px - MD_GATHER8(n, x), dy = py - MD_GATHER8(n, y), dz = pz - MD_GATHER8(n, z);
        float8 r2 = dx * dx + dy * dy + dz * dz;
        float8 r2inv = 1.0f / r2;
        float8 r6inv = r2inv * r2inv * r2inv;
        float8 c = r2inv * r6inv * (lj1 * r6inv - lj2);
        int8 within = r2 < cutoff_sq;
        fx = select(fx, fx + dx * c, within);
        fy = select(fy, fy + dy * c, within);
        fz = select(fz, fz + dz * c, within);
    }
    float lx[8], ly[8], lz[8];
    vstore8(fx, 0, lx); vstore8(fy, 0, ly); vstore8(fz, 0, lz);
    for (int j = 0; j < 8; j++)
        force[i + j] = (float4)(lx[j], ly[j], lz[j], 0.0f);
}

// The device's streaming copy: one float4 per work-item, the yardstick of a kernel that reads and writes once.
kernel void stream_copy4(global const float4* restrict src, global float4* restrict dst) {
    size_t i = get_global_id(0);
    dst[i] = src[i];
}

// 1-D 3-point Jacobi, one work-item per point, the boundary clamped.
kernel void jacobi1d(global const float* restrict a, global float* restrict out, const int n) {
    int i = get_global_id(0);
    float left = a[max(i - 1, 0)], right = a[min(i + 1, n - 1)];
    out[i] = 0.25f * left + 0.5f * a[i] + 0.25f * right;
}

// 2-D 5-point Jacobi on an m x n grid (row-major), the boundary clamped: 16 points of a row per work-item (ceil(n/16)
// x m work-items), read as five float16s (the rows above and below, the row shifted left, not, and right) where
// the 16 columns and their neighbours lie inside the row, point by point otherwise.
kernel void jacobi2d(global const float* restrict a, global float* restrict out, const int m, const int n) {
    int c = 16 * get_global_id(0), i = get_global_id(1);
    const global float* row = a + i * n;
    const global float* up = a + max(i - 1, 0) * n;
    const global float* down = a + min(i + 1, m - 1) * n;
    if (c >= 1 && c + 17 <= n) {
        float16 sum = vload16(0, up + c) + vload16(0, row + c - 1) + vload16(0, row + c) + vload16(0, row + c + 1)
                      + vload16(0, down + c);
        vstore16(0.2f * sum, 0, out + i * n + c);
    } else {
        for (int j = c; j < min(c + 16, n); j++)
            out[i * n + j] = 0.2f * (up[j] + row[max(j - 1, 0)] + row[j] + row[min(j + 1, n - 1)] + down[j]);
    }
}

// All-pairs N-body, one work-item per body: the softened acceleration by every body (mass in w), then one
// step of dt, as examples/nbody.py computes it.
kernel void nbody_body(global const float4* restrict pos, global const float4* restrict vel,
                       global float4* restrict new_pos, global float4* restrict new_vel, const int n,
                       const float eps2, const float dt) {
    int i = get_global_id(0);
    float4 p = pos[i], a = (float4)(0.0f);
    for (int j = 0; j < n; j++) {
        float4 q = pos[j];
        float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        float inv = rsqrt(dx * dx + dy * dy + dz * dz + eps2);
        float s = q.w * inv * inv * inv;
        a.x += dx * s; a.y += dy * s; a.z += dz * s;
    }
    float4 v = vel[i];
    new_pos[i] = (float4)(p.xyz + v.xyz * dt + 0.5f * a.xyz * dt * dt, p.w);
    new_vel[i] = v + a * dt;
}

// All-pairs N-body, 8 bodies per work-item in the lanes of float8s (a struct of vectors across bodies, as
// lift.rules.struct_of_vectors derives it): every other body is read once for all 8 and broadcast. N a multiple of 8.
#define LANES8(a, c) \
    (float8)(a[i].c, a[i + 1].c, a[i + 2].c, a[i + 3].c, a[i + 4].c, a[i + 5].c, a[i + 6].c, a[i + 7].c)
kernel void nbody_lanes8(global const float4* restrict pos, global const float4* restrict vel,
                         global float4* restrict new_pos, global float4* restrict new_vel, const int n,
                         const float eps2, const float dt) {
    int i = 8 * get_global_id(0);
    float8 px = LANES8(pos, x), py = LANES8(pos, y), pz = LANES8(pos, z), ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; j++) {
        float4 q = pos[j];
        float8 dx = q.x - px, dy = q.y - py, dz = q.z - pz;
        float8 inv = rsqrt(dx * dx + dy * dy + dz * dz + eps2);
        float8 s = q.w * inv * inv * inv;
        ax += dx * s; ay += dy * s; az += dz * s;
    }
    float lx[8], ly[8], lz[8];
    vstore8(ax, 0, lx); vstore8(ay, 0, ly); vstore8(az, 0, lz);
    for (int k = 0; k < 8; k++) {
        float4 p = pos[i + k], v = vel[i + k], a = (float4)(lx[k], ly[k], lz[k], 0.0f);
        new_pos[i + k] = (float4)(p.xyz + v.xyz * dt + 0.5f * a.xyz * dt * dt, p.w);
        new_vel[i + k] = v + a * dt;
    }
}

// Matrix multiply C = A B (A of M x K, B of K x N): 4 x 16 results per work-item in eight float8 registers.
kernel void matmul_4x16(const global float* restrict A, const global float* restrict B, global float* C,
                        const int K, const int N) {
    int j = get_global_id(0), i = get_global_id(1);
    float8 a0 = 0, a1 = 0, a2 = 0, a3 = 0, c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    for (int k = 0; k < K; k++) {
        float8 b = vload8(0, B + k * N + 16 * j), d = vload8(1, B + k * N + 16 * j);
        float x0 = A[(4 * i) * K + k], x1 = A[(4 * i + 1) * K + k], x2 = A[(4 * i + 2) * K + k],
              x3 = A[(4 * i + 3) * K + k];
        a0 += x0 * b; a1 += x1 * b; a2 += x2 * b; a3 += x3 * b;
        c0 += x0 * d; c1 += x1 * d; c2 += x2 * d; c3 += x3 * d;
    }
    global float* c = C + (4 * i) * N + 16 * j;
    vstore8(a0, 0, c); vstore8(c0, 1, c); vstore8(a1, 0, c + N); vstore8(c1, 1, c + N);
    vstore8(a2, 0, c + 2 * N); vstore8(c2, 1, c + 2 * N); vstore8(a3, 0, c + 3 * N); vstore8(c3, 1, c + 3 * N);
}
