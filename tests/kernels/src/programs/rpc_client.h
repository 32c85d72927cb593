/*
 * The GPU (client) side of LLVM libc's GPU RPC protocol, written from its
 * definition in llvm-project's libc/shared/rpc.h (trees of 2025-2026, before
 * the interrupt doorbell): no code of LLVM's is used. One wave at a time owns
 * a port; a port's buffer belongs to the client while its inbox equals its
 * outbox, to the server otherwise. Every send is mirrored by a server recv.
 *
 * Layout of the shared buffer for N ports and L lanes (the server builds it):
 *   u32 inbox[N] (offset 0, the server's outbox)
 *   u32 outbox[N] (offset 4N, the server's inbox)
 *   struct rpc_header header[N] (8-aligned)
 *   struct rpc_buffer packet[N][L] (8-aligned)
 * The host copies a whole struct rpc_client into __llvm_rpc_client.
 *
 * With AQ_RPC_DOORBELL defined, the client speaks the later generation (llvm-project
 * PR 188067): a 64-byte doorbell record {u64 *value; u64 *mailbox; u32 event_id} at offset
 * 0 of the buffer (everything above shifted by 64), a doorbell pointer in the client after
 * port_count, 16384 ports. This test client only supports an uninitialised doorbell (value
 * NULL: nothing to ring), which is what aqueduct's host sets up; it does not raise the
 * device interrupt LLVM's client raises when value is set.
 */
#ifndef AQ_RPC_CLIENT_H
#define AQ_RPC_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef AQ_RPC_DOORBELL
#define RPC_MAX_PORT_COUNT 16384u
#else
#define RPC_MAX_PORT_COUNT 4096u
#endif
#define RPC_OPCODE(n) ((uint32_t)'c' << 24 | (n))
#define RPC_NOOP RPC_OPCODE(0)
#define RPC_EXIT RPC_OPCODE(1)
#define RPC_WRITE_TO_STDOUT RPC_OPCODE(2)
#define RPC_WRITE_TO_STDERR RPC_OPCODE(3)
#define RPC_WRITE_TO_STDOUT_NEWLINE RPC_OPCODE(5)
#define RPC_MALLOC RPC_OPCODE(10)
#define RPC_FREE RPC_OPCODE(11)
#define RPC_ABORT RPC_OPCODE(13)

#define AQ_EXPORT __attribute__((visibility("protected")))
#define AQ_INLINE static inline __attribute__((always_inline))

struct rpc_header {
    uint64_t mask;
    uint32_t opcode;
};

struct rpc_buffer {
    uint64_t data[8];
};

struct rpc_doorbell {
    uint64_t *value;
    uint64_t *mailbox;
    uint32_t event_id;
};

struct rpc_client {
    uint32_t port_count;
#ifdef AQ_RPC_DOORBELL
    struct rpc_doorbell *doorbell;
#endif
    uint32_t *inbox;
    uint32_t *outbox;
    struct rpc_header *header;
    struct rpc_buffer *packet;
    uint32_t lock[RPC_MAX_PORT_COUNT / 32];
};

/* Written by the loader before _begin; 552 bytes (2096 with the doorbell), as LLVM's
 * rpc::Client. */
AQ_EXPORT struct rpc_client __llvm_rpc_client;

struct rpc_port {
    uint64_t lane_mask;
    uint32_t index;
    uint32_t out;
    bool receive;
    bool owns_buffer;
};

AQ_INLINE uint32_t rpc_lane_id(void) {
    return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}

AQ_INLINE uint64_t rpc_lane_mask(void) { return __builtin_amdgcn_read_exec(); }

AQ_INLINE uint32_t rpc_broadcast(uint32_t x) { return __builtin_amdgcn_readfirstlane(x); }

AQ_INLINE uint64_t rpc_ballot(uint64_t mask, bool x) { return __builtin_amdgcn_ballot_w64(x) & mask; }

AQ_INLINE bool rpc_is_first_lane(uint64_t mask) {
    return rpc_lane_id() == (uint32_t)__builtin_ctzll(mask);
}

AQ_INLINE void rpc_sync_lane(void) { __builtin_amdgcn_wave_barrier(); }

AQ_INLINE uint32_t rpc_load_inbox(uint32_t index) {
    return rpc_broadcast(__scoped_atomic_load_n(&__llvm_rpc_client.inbox[index],
                                                __ATOMIC_RELAXED, __MEMORY_SCOPE_SYSTEM));
}

AQ_INLINE uint32_t rpc_load_outbox(uint32_t index) {
    return rpc_broadcast(__scoped_atomic_load_n(&__llvm_rpc_client.outbox[index],
                                                __ATOMIC_RELAXED, __MEMORY_SCOPE_SYSTEM));
}

AQ_INLINE uint32_t rpc_invert_outbox(uint32_t index, uint32_t current) {
    uint32_t inverted = !current;
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "");
    __scoped_atomic_store_n(&__llvm_rpc_client.outbox[index], inverted, __ATOMIC_RELAXED,
                            __MEMORY_SCOPE_SYSTEM);
    return inverted;
}

/* The client owns the buffer when inbox == outbox. */
AQ_INLINE void rpc_wait_for_ownership(uint32_t index, uint32_t out, uint32_t in) {
    while (in != out) {
        __builtin_amdgcn_s_sleep(2);
        in = rpc_load_inbox(index);
    }
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "");
}

AQ_INLINE bool rpc_try_lock(uint64_t mask, uint32_t index) {
    bool in_mask = (mask >> rpc_lane_id()) & 1;
    uint32_t bit = 1u << (index % 32);
    uint32_t before = __scoped_atomic_fetch_or(&__llvm_rpc_client.lock[index / 32],
                                               in_mask ? bit : 0u, __ATOMIC_RELAXED,
                                               __MEMORY_SCOPE_DEVICE) & bit;
    uint64_t packed = rpc_ballot(mask, before != 0);
    bool holding = mask != packed;
    if (holding)
        __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "agent");
    return holding;
}

AQ_INLINE void rpc_unlock(uint64_t mask, uint32_t index) {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent");
    uint32_t bit = rpc_is_first_lane(mask) ? 1u << (index % 32) : 0u;
    __scoped_atomic_fetch_and(&__llvm_rpc_client.lock[index / 32], ~bit, __ATOMIC_RELAXED,
                              __MEMORY_SCOPE_DEVICE);
    rpc_sync_lane();
}

/* Scan for a port this wave can lock and whose buffer the client owns. */
AQ_INLINE struct rpc_port rpc_open(uint32_t opcode) {
    for (uint32_t index = 0;; ++index) {
        if (index >= __llvm_rpc_client.port_count)
            index = 0;
        uint64_t mask = rpc_lane_mask();
        if (!rpc_try_lock(mask, index))
            continue;
        uint32_t in = rpc_load_inbox(index);
        uint32_t out = rpc_load_outbox(index);
        if (in != out) {
            rpc_unlock(mask, index);
            continue;
        }
        if (rpc_is_first_lane(mask)) {
            __llvm_rpc_client.header[index].opcode = opcode;
            __llvm_rpc_client.header[index].mask = mask;
        }
        rpc_sync_lane();
#ifdef AQ_RPC_DOORBELL
        /* LLVM's notify(): nothing to do while the host leaves the doorbell unset. */
        if (__llvm_rpc_client.doorbell->value)
            __builtin_trap();
#endif
        struct rpc_port port = {mask, index, out, false, true};
        return port;
    }
}

AQ_INLINE struct rpc_buffer *rpc_lane_buffer(struct rpc_port *port) {
    return &__llvm_rpc_client.packet[port->index * 64u + rpc_lane_id()];
}

/* send = rpc_send_begin, fill the lane's buffer, rpc_send_end. */
AQ_INLINE struct rpc_buffer *rpc_send_begin(struct rpc_port *port) {
    uint32_t in = port->owns_buffer ? port->out : rpc_load_inbox(port->index);
    rpc_wait_for_ownership(port->index, port->out, in);
    return rpc_lane_buffer(port);
}

AQ_INLINE void rpc_send_end(struct rpc_port *port) {
    port->out = rpc_invert_outbox(port->index, port->out);
    port->owns_buffer = false;
    port->receive = false;
}

/* recv = rpc_recv, then read the lane's buffer. */
AQ_INLINE struct rpc_buffer *rpc_recv(struct rpc_port *port) {
    if (port->receive) {
        port->out = rpc_invert_outbox(port->index, port->out);
        port->owns_buffer = false;
    }
    uint32_t in = port->owns_buffer ? port->out : rpc_load_inbox(port->index);
    rpc_wait_for_ownership(port->index, port->out, in);
    port->receive = true;
    port->owns_buffer = true;
    return rpc_lane_buffer(port);
}

AQ_INLINE void rpc_close(struct rpc_port *port) {
    rpc_sync_lane();
    rpc_unlock(port->lane_mask, port->index);
}

AQ_INLINE void rpc_copy(void *dst, const void *src, uint64_t n) {
    volatile uint8_t *d = (volatile uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    for (uint64_t i = 0; i < n; ++i)
        d[i] = s[i];
}

/* Stream `size` bytes per lane: first packet {size, 56 bytes}, then 64-byte packets. */
AQ_INLINE void rpc_send_n(struct rpc_port *port, const void *src, uint64_t size) {
    struct rpc_buffer *b = rpc_send_begin(port);
    b->data[0] = size;
    rpc_copy(&b->data[1], src, size > 56 ? 56 : size);
    rpc_send_end(port);
    for (uint64_t idx = 56; rpc_ballot(port->lane_mask, idx < size); idx += 64) {
        b = rpc_send_begin(port);
        if (idx < size)
            rpc_copy(b->data, (const uint8_t *)src + idx, size - idx > 64 ? 64 : size - idx);
        rpc_send_end(port);
    }
}

#endif
