// MD's algorithm written several ways (benchmarks/bench_md_variants.py): which of them differ on a device.
// Every kernel computes examples/md.py's forces: neighbour k of atom i at neighbours[i * count + k] (the row
// layout lift reads), or at neighbours[k * atoms + i] (the transposed layout SHOC reads), the cutoff a select.

#define LJ_STEP(f, p, q)                                                                     \
    {                                                                                        \
        float dx = p.x - q.x, dy = p.y - q.y, dz = p.z - q.z;                                \
        float r2 = dx * dx + dy * dy + dz * dz;                                              \
        float r2inv = 1.0f / r2, r6inv = r2inv * r2inv * r2inv;                              \
        float c = r2inv * r6inv * (lj1 * r6inv - lj2);                                       \
        f = r2 < cutoff_sq ? f + (float4)(dx * c, dy * c, dz * c, 0.0f) : f;                 \
    }

// One work-item per atom, its neighbours read along its row (lift's md_global).
kernel void md_rows(global const float4* restrict position, global const int* restrict neighbours,
                    global float4* restrict force, const int count, const float cutoff_sq,
                    const float lj1, const float lj2) {
    int i = get_global_id(0);
    float4 p = position[i], f = 0.0f;
    for (int k = 0; k < count; k++) {
        float4 q = position[neighbours[i * count + k]];
        LJ_STEP(f, p, q)
    }
    force[i] = f;
}

// One work-item per atom, its neighbours read down a column of the transposed list (SHOC's layout, coalesced on
// a GPU; on a CPU each work-item's reads are `atoms` ints apart).
kernel void md_columns(global const float4* restrict position, global const int* restrict neighbours,
                       global float4* restrict force, const int count, const float cutoff_sq,
                       const float lj1, const float lj2) {
    int i = get_global_id(0), atoms = get_global_size(0);
    float4 p = position[i], f = 0.0f;
    for (int k = 0; k < count; k++) {
        float4 q = position[neighbours[k * atoms + i]];
        LJ_STEP(f, p, q)
    }
    force[i] = f;
}

// H atoms per work-item, their H rows folded at once into H private accumulators (row blocking,
// lift.rules.row_blocking's shape).
#define MD_ROW_BLOCKS(H)                                                                                       \
kernel void md_row_blocks##H(global const float4* restrict position, global const int* restrict neighbours,    \
                             global float4* restrict force, const int count, const float cutoff_sq,           \
                             const float lj1, const float lj2) {                                              \
    int i = H * get_global_id(0);                                                                              \
    float4 p[H], f[H];                                                                                         \
    for (int j = 0; j < H; j++) { p[j] = position[i + j]; f[j] = 0.0f; }                                       \
    for (int k = 0; k < count; k++)                                                                            \
        for (int j = 0; j < H; j++) {                                                                          \
            float4 q = position[neighbours[(i + j) * count + k]];                                              \
            LJ_STEP(f[j], p[j], q)                                                                             \
        }                                                                                                      \
    for (int j = 0; j < H; j++) force[i + j] = f[j];                                                           \
}
MD_ROW_BLOCKS(2)
MD_ROW_BLOCKS(4)
MD_ROW_BLOCKS(8)

// 8 atoms per work-item in the lanes of float8s, the positions as three arrays of floats (the struct of arrays
// lift.rules.struct_of_arrays makes of an array of float4s): three scalar gathers per lane and step, where
// handwritten.cl's md_lanes8 gathers one float4.
#define MD_SOA_GATHER8(a, n) (float8)(a[n.s0], a[n.s1], a[n.s2], a[n.s3], a[n.s4], a[n.s5], a[n.s6], a[n.s7])
kernel void md_soa_lanes8(global const float* restrict xs, global const float* restrict ys,
                          global const float* restrict zs, global const int* restrict neighbours,
                          global float4* restrict force, const int count, const float cutoff_sq,
                          const float lj1, const float lj2) {
    int i = 8 * get_global_id(0);
    int8 row = (i + (int8)(0, 1, 2, 3, 4, 5, 6, 7)) * count;
    float8 px = vload8(0, xs + i), py = vload8(0, ys + i), pz = vload8(0, zs + i);
    float8 fx = 0.0f, fy = 0.0f, fz = 0.0f;
    for (int k = 0; k < count; k++) {
        int8 n = (int8)(neighbours[row.s0 + k], neighbours[row.s1 + k], neighbours[row.s2 + k],
                        neighbours[row.s3 + k], neighbours[row.s4 + k], neighbours[row.s5 + k],
                        neighbours[row.s6 + k], neighbours[row.s7 + k]);
        float8 dx = px - MD_SOA_GATHER8(xs, n), dy = py - MD_SOA_GATHER8(ys, n), dz = pz - MD_SOA_GATHER8(zs, n);
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
