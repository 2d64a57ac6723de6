/*
 * The machine's UDP limit: how many datagrams one process can move through the kernel per
 * CPU-second on loopback, with nothing else to do. It is the ceiling against which `osn node`'s
 * own datagrams per CPU-second are read (bench/node_cpu.sh prints the node's figure as a
 * fraction of this one, measured in the same run).
 *
 * Two UDP sockets on 127.0.0.1 (each bound to port 0, the port read back) play ping-pong in one
 * thread: A sends a batch of BATCH datagrams of BYTES bytes to B in one sendmmsg(2), B reads
 * them with recvmmsg(2) and sends them back in one sendmmsg(2), A reads them. Every datagram is
 * sent once and received once by this process, so the process pays for both ends of each one,
 * as the node does for what it reads and what it writes; on loopback the sender's system call
 * also delivers the datagram to the receiving socket. The sends carry the destination address
 * (unconnected sockets, as the node's), so each pays the route lookup the node pays; -c
 * connects the sockets instead, to show what that lookup costs.
 *
 * A datagram "moved" is one send plus one receive; the figure is moved datagrams per CPU-second
 * of this process (user + system time, getrusage(2)), with the user/system split. It runs until
 * SECONDS of CPU time are spent (or 3 x SECONDS of wall time, on a machine so busy that this
 * process hardly runs). A datagram that does not come back within 0.2 s (a full buffer) is
 * counted as lost, never waited for again. It measures; it never fails on time.
 *
 * -p puts B in a second process (forked), which waits in recvmmsg(2) for what A sends and echoes
 * it: each side then sleeps until the other's datagrams wake it, as a node and its peer do, and
 * the figure is per CPU-second of both processes. One thread that never sleeps is the kernel's
 * ceiling; -p with a batch of 1 is a ping that pays a wake-up on each side for every datagram,
 * which is what a node pays at a low rate (it reads one or two datagrams a wake-up). That
 * figure is the machine's state more than its limit: on an idle virtual machine each wake-up is
 * a costly cross-core interrupt, and the ping moved 0.05-0.07 M datagrams per CPU-second quiet
 * against 0.32-0.34 M at a load of 11 (docs/performance.md).
 *
 *     udp_limit [-c] [-p] [SECONDS [BATCH [BYTES]]]     (defaults: 2 s, 32, 200 bytes)
 *
 * Prints one line of key=value pairs:
 *     udp_limit bytes=200 batch=32 connected=0 processes=1 warmup=M datagrams=N lost=L cpu_s=C
 *               user_s=U sys_s=S wall_s=W datagrams_per_cpu_s=D
 * where M datagrams of a first 100 rounds (warming caches and buffers) are not counted. With -p,
 * SECONDS is wall time (the processes take turns) and cpu_s is both processes' CPU time.
 */
#define _GNU_SOURCE /* sendmmsg, recvmmsg */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCH_MAX 1024
#define BYTES_MAX 2048 /* SIP over UDP stays far below; 200 bytes is the default */

static char buf[BATCH_MAX][BYTES_MAX];

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double tv(struct timeval t)
{
    return (double)t.tv_sec + 1e-6 * (double)t.tv_usec;
}

/* This process's user and system CPU seconds so far. */
static void cpu(double *user, double *sys)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *user = tv(ru.ru_utime);
    *sys = tv(ru.ru_stime);
}

/* A UDP socket bound to 127.0.0.1 on a port the kernel chooses; *addr gets the address bound. */
static int open_socket(struct sockaddr_in *addr)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0)
        return -1;
    /* a lost datagram is given up after 0.2 s (a batch larger than the receive buffer) */
    struct timeval to = {.tv_usec = 200000};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &to, sizeof to);
    *addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof *addr;
    if (bind(s, (struct sockaddr *)addr, sizeof *addr) != 0 ||
        getsockname(s, (struct sockaddr *)addr, &len) != 0) {
        close(s);
        return -1;
    }
    return s;
}

/* Sends n datagrams of size bytes from s to `to` (NULL: s is connected); returns those sent. */
static int send_batch(int s, const struct sockaddr_in *to, int n, size_t size)
{
    struct mmsghdr m[BATCH_MAX];
    struct iovec iov[BATCH_MAX];
    for (int i = 0; i < n; i++) {
        iov[i] = (struct iovec){buf[i], size};
        m[i] = (struct mmsghdr){0};
        m[i].msg_hdr.msg_iov = &iov[i];
        m[i].msg_hdr.msg_iovlen = 1;
        m[i].msg_hdr.msg_name = (void *)to;
        m[i].msg_hdr.msg_namelen = to ? sizeof *to : 0;
    }
    int done = 0;
    while (done < n) {
        int r = sendmmsg(s, m + done, (unsigned)(n - done), 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        done += r;
    }
    return done;
}

/* Reads up to n datagrams from s, as the node does (a batch a call, the sender's address
 * read); returns how many came before 0.2 s passed with none. */
static int recv_batch(int s, int n)
{
    struct mmsghdr m[BATCH_MAX];
    struct iovec iov[BATCH_MAX];
    struct sockaddr_in from[BATCH_MAX];
    int got = 0;
    while (got < n) {
        int want = n - got;
        for (int i = 0; i < want; i++) {
            iov[i] = (struct iovec){buf[i], sizeof buf[i]};
            m[i] = (struct mmsghdr){0};
            m[i].msg_hdr.msg_iov = &iov[i];
            m[i].msg_hdr.msg_iovlen = 1;
            m[i].msg_hdr.msg_name = &from[i];
            m[i].msg_hdr.msg_namelen = sizeof from[i];
        }
        int r = recvmmsg(s, m, (unsigned)want, MSG_WAITFORONE, NULL);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* 0.2 s with nothing: the rest is lost */
        got += r;
    }
    return got;
}

/* -p's second process: echoes to `to` (NULL: connected) every batch s reads, until a datagram of
 * one byte (the end) comes or the parent is gone. */
static void echo_until_end(int s, const struct sockaddr_in *to, size_t size)
{
    for (;;) {
        struct mmsghdr m[BATCH_MAX];
        struct iovec iov[BATCH_MAX];
        for (int i = 0; i < BATCH_MAX; i++) {
            iov[i] = (struct iovec){buf[i], sizeof buf[i]};
            m[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
        }
        int r = recvmmsg(s, m, BATCH_MAX, MSG_WAITFORONE, NULL);
        if (r <= 0) {
            if (getppid() == 1)
                return; /* the parent died: nobody will send the end */
            continue;   /* EINTR, or 0.2 s with nothing */
        }
        for (int i = 0; i < r; i++)
            if (m[i].msg_len == 1)
                return;
        send_batch(s, to, r, size);
    }
}

static int usage(void)
{
    fprintf(stderr,
            "usage: udp_limit [-c] [-p] [SECONDS [BATCH [BYTES]]]\n"
            "  SECONDS > 0 of CPU time (default 2; with -p, of wall time), BATCH 1..%d\n"
            "  (default 32), BYTES 2..2048 (default 200); -c: connected sockets;\n"
            "  -p: the echoing socket in a second process, both sleeping in recvmmsg\n",
            BATCH_MAX);
    return 2;
}

int main(int argc, char **argv)
{
    int connected = 0, processes = 1, ai = 1;
    for (; ai < argc && argv[ai][0] == '-' && argv[ai][1] && !argv[ai][2]; ai++) {
        if (argv[ai][1] == 'c')
            connected = 1;
        else if (argv[ai][1] == 'p')
            processes = 2;
        else {
            fprintf(stderr, "udp_limit: unknown option '%s'\n", argv[ai]);
            return usage();
        }
    }
    double seconds = 2;
    long batch = 32, bytes = 200;
    char *end;
    if (ai < argc) {
        seconds = strtod(argv[ai++], &end);
        if (*end || !(seconds > 0 && seconds <= 3600)) {
            fprintf(stderr, "udp_limit: SECONDS '%s' is not a number in (0, 3600]\n", argv[ai - 1]);
            return usage();
        }
    }
    if (ai < argc) {
        batch = strtol(argv[ai++], &end, 10);
        if (*end || batch < 1 || batch > BATCH_MAX) {
            fprintf(stderr, "udp_limit: BATCH '%s' is not an integer in 1..%d\n", argv[ai - 1],
                    BATCH_MAX);
            return usage();
        }
    }
    if (ai < argc) {
        bytes = strtol(argv[ai++], &end, 10);
        /* a datagram of one byte is -p's end */
        if (*end || bytes < 2 || bytes > (long)sizeof buf[0]) {
            fprintf(stderr, "udp_limit: BYTES '%s' is not an integer in 2..%zu\n", argv[ai - 1],
                    sizeof buf[0]);
            return usage();
        }
    }
    if (ai < argc)
        return usage();

    struct sockaddr_in a_addr, b_addr;
    int a = open_socket(&a_addr), b = open_socket(&b_addr);
    if (a < 0 || b < 0) {
        perror("udp_limit: socket on 127.0.0.1");
        return 1;
    }
    const struct sockaddr_in *to_b = &b_addr, *to_a = &a_addr;
    if (connected) {
        if (connect(a, (struct sockaddr *)&b_addr, sizeof b_addr) != 0 ||
            connect(b, (struct sockaddr *)&a_addr, sizeof a_addr) != 0) {
            perror("udp_limit: connect");
            return 1;
        }
        to_b = to_a = NULL;
    }
    memset(buf, 'x', sizeof buf);

    pid_t echo = -1;
    if (processes == 2) {
        fflush(NULL);
        echo = fork();
        if (echo < 0) {
            perror("udp_limit: fork");
            return 1;
        }
        if (echo == 0) {
            close(a);
            echo_until_end(b, to_a, (size_t)bytes);
            _exit(0);
        }
        close(b);
        b = -1;
    }
    /* One round: A sends a batch to B and reads back what B sent; returns the datagrams that
     * arrived at B (*k) and back at A. In one process B's part is done here; with -p the echo
     * process does it, and every datagram back at A went both ways. */
    int k;
#define ROUND()                                                                           \
    (processes == 1 ? (k = recv_batch(b, send_batch(a, to_b, (int)batch, (size_t)bytes)), \
                       recv_batch(a, send_batch(b, to_a, k, (size_t)bytes)))              \
                    : (k = recv_batch(a, send_batch(a, to_b, (int)batch, (size_t)bytes))))

    /* A short warm-up (caches, the sockets' first buffers), not counted (with -p the echo
     * process's CPU time includes it: 100 rounds, well under 1% of a run). */
    unsigned long long warm = 0;
    for (int i = 0; i < 100; i++) {
        int back = ROUND();
        warm += (unsigned long long)(k + back);
        if (k + back < 2 * batch)
            break; /* a batch too large for the socket buffers: each loss costs a wait */
    }

    double u0, s0, u1, s1, w0 = wall(), w1;
    cpu(&u0, &s0);
    unsigned long long moved = 0, lost = 0;
    for (;;) {
        int back = ROUND();
        moved += (unsigned long long)(k + back);
        lost += (unsigned long long)(2 * batch - k - back);
        cpu(&u1, &s1);
        w1 = wall();
        if (processes == 2 ? w1 - w0 >= seconds
                           : u1 + s1 - u0 - s0 >= seconds || w1 - w0 >= 3 * seconds)
            break;
    }
#undef ROUND
    if (echo > 0) { /* the end, and the echo process's CPU time */
        send_batch(a, to_b, 1, 1);
        int st;
        waitpid(echo, &st, 0);
        struct rusage ru;
        getrusage(RUSAGE_CHILDREN, &ru);
        u1 += tv(ru.ru_utime);
        s1 += tv(ru.ru_stime);
    }
    double c = u1 + s1 - u0 - s0;
    printf("udp_limit bytes=%ld batch=%ld connected=%d processes=%d warmup=%llu datagrams=%llu "
           "lost=%llu cpu_s=%.3f user_s=%.3f sys_s=%.3f wall_s=%.3f datagrams_per_cpu_s=%.0f\n",
           bytes, batch, connected, processes, warm, moved, lost, c, u1 - u0, s1 - s0, w1 - w0,
           c > 0 ? (double)moved / c : 0.0);
    close(a);
    if (b >= 0)
        close(b);
    return 0;
}
