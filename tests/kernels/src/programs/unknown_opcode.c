/*
 * PROGRAM unknown_opcode
 * WHAT    Thread 0 opens a port with opcode 'c' << 24 | 99, which no server
 *         serves, sends a packet and waits for an answer.
 * EXPECT  the host reports the unhandled opcode 0x63000063 and stops the
 *         program (no hang).
 */
#include "start.h"

int main(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    if (aq_thread_id() == 0) {
        struct rpc_port port = rpc_open(RPC_OPCODE(99));
        rpc_send_begin(&port)->data[0] = 1;
        rpc_send_end(&port);
        uint64_t answer = rpc_recv(&port)->data[0];
        rpc_close(&port);
        return (int)answer;
    }
    return 0;
}
