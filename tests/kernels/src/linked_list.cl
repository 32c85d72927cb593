/*
 * KERNEL  linked_list
 * WHAT    Pointer chasing: each work-item walks its own singly linked list
 *         of nodes holding absolute 64-bit device addresses, summing the
 *         values. Dependent loads with lane-dependent trip counts.
 * ARGS    0 heads : global node* const*  (n elements: device address of the first node, or 0)
 *         1 sums  : global uint*         (n elements, output)
 *         2 lens  : global uint*         (n elements, output)
 *         3 n     : uint
 *         node layout (16 bytes, 8-aligned): u64 next (device address or 0),
 *         u32 value, u32 pad (ignored).
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     for i in 0..n: walk from heads[i] until next == 0 or 4096 nodes:
 *           sums[i] = sum of node.value (wrapping), lens[i] = number of nodes visited.
 * COMPARE exact.
 */
#include "aq.h"

typedef struct node {
    __global struct node *next;
    uint value;
    uint pad;
} node_t;

__kernel void linked_list(__global node_t *__global const *heads,
                          __global uint *sums, __global uint *lens, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    __global node_t *p = heads[i];
    uint s = 0, c = 0;
    while (p && c < 4096) {
        s += p->value;
        p = p->next;
        c++;
    }
    sums[i] = s;
    lens[i] = c;
}
