/*
 * One child process of `osn testbed` (testbed.h): started with fork and exec, its listening line
 * read from a pipe on its standard output, and stopped by its pid with a bound on every wait.
 *
 * A node binds port 0 and prints "osn node ELEMENT listening on ADDR ..." once bound; that line
 * is the only way the testbed learns its port (a free-port guess races other programs). Every
 * wait is bounded and polls in steps of 20 ms, so that SIGINT/SIGTERM of the testbed (*stop) is
 * seen within one step. A child asks the kernel to send it SIGTERM when the testbed dies
 * (PR_SET_PDEATHSIG): a killed testbed leaves no node behind.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "testbed.h"

#define STEP_MS 20

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* The environment of a child: the testbed's, without what an MPI launcher put there. A node or
 * `osn sim` that saw OMPI_COMM_WORLD_SIZE or PMI_RANK would take itself for a rank of the job
 * (src/study/mpi_load.c) and join it. Built once, in the parent (not between fork and exec). */
static char **child_env(void)
{
    static char **env;
    static const char *const drop[] = {"OMPI_", "PMIX_", "PMI_", NULL};
    if (env)
        return env;
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    env = calloc(n + 1, sizeof *env);
    if (!env)
        return environ;
    for (size_t i = 0; i < n; i++) {
        bool keep = true;
        for (int d = 0; drop[d] && keep; d++)
            keep = strncmp(environ[i], drop[d], strlen(drop[d])) != 0;
        if (keep)
            env[k++] = environ[i];
    }
    return env;
}

/* In the child, between fork and exec: only async-signal-safe calls. */
static void child(const struct tb_proc *p, char *const argv[], int out_w, pid_t parent)
{
    sigset_t none;
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
    if (getppid() != parent) /* the testbed died before prctl */
        _exit(127);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    int log = open(p->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (log < 0 || in < 0)
        _exit(127);
    dup2(in, STDIN_FILENO);
    dup2(out_w >= 0 ? out_w : log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    execve(argv[0], argv, child_env());
    static const char msg[] = "osn testbed: exec failed\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(127);
}

int tb_proc_start(struct tb_proc *p, char *const argv[], bool pipe_out)
{
    int fds[2] = {-1, -1};
    pid_t parent = getpid();

    p->pid = p->pid_was = 0;
    p->out_fd = -1;
    p->reaped = p->killed = false;
    p->status = 0;
    p->addr[0] = '\0';
    if (pipe_out && pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    (void)child_env(); /* made here: the child may only exec */
    fflush(NULL);      /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        if (fds[0] >= 0) {
            close(fds[0]);
            close(fds[1]);
        }
        errno = e;
        return -1;
    }
    if (pid == 0)
        child(p, argv, fds[1], parent);
    if (fds[1] >= 0)
        close(fds[1]);
    p->pid = p->pid_was = pid;
    p->out_fd = fds[0];
    return 0;
}

/* Looks for the listening line in buf[0..n) (NUL-terminated); copies its address. */
static bool find_addr(const char *buf, char *addr, size_t size)
{
    static const char key[] = " listening on ";
    const char *s = strstr(buf, key);
    if (!s)
        return false;
    s += sizeof key - 1;
    size_t n = strcspn(s, " \n");
    if (!s[n] || n == 0 || n >= size) /* the line is not complete yet */
        return false;
    memcpy(addr, s, n);
    addr[n] = '\0';
    return true;
}

int tb_proc_ready(struct tb_proc *p, double timeout, volatile sig_atomic_t *stop)
{
    char buf[1024];
    size_t len = 0;
    double end = now_s() + timeout;
    int rc = -2;

    while (now_s() < end) {
        if (stop && *stop) {
            rc = -3;
            break;
        }
        struct pollfd pfd = {p->out_fd, POLLIN, 0};
        int r = poll(&pfd, 1, STEP_MS);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        ssize_t got = read(p->out_fd, buf + len, sizeof buf - 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            rc = -1;
            break;
        }
        len += (size_t)got;
        buf[len] = '\0';
        if (find_addr(buf, p->addr, sizeof p->addr)) {
            rc = 0;
            break;
        }
        if (len == sizeof buf - 1) { /* a kilobyte without the line: not a node */
            rc = -1;
            break;
        }
    }
    /* Nothing else is read: with -q a node writes nothing more to standard output, and one that
     * does gets EPIPE, which the node ignores. */
    close(p->out_fd);
    p->out_fd = -1;
    return rc;
}

static bool reap(struct tb_proc *p, int flags)
{
    int st;
    pid_t r;
    do
        r = waitpid(p->pid, &st, flags);
    while (r < 0 && errno == EINTR);
    if (r == p->pid || (r < 0 && errno == ECHILD)) {
        p->status = r == p->pid ? st : 0;
        p->reaped = true;
        p->pid = 0;
        return true;
    }
    return false;
}

int tb_proc_wait(struct tb_proc *p, double timeout, volatile sig_atomic_t *stop)
{
    double end = now_s() + timeout;
    if (p->pid <= 0)
        return 1;
    for (;;) {
        if (reap(p, WNOHANG))
            return 1;
        if (now_s() >= end || (stop && *stop))
            return 0;
        sleep_ms(STEP_MS);
    }
}

void tb_proc_stop(struct tb_proc *p, double timeout)
{
    if (p->out_fd >= 0) {
        close(p->out_fd);
        p->out_fd = -1;
    }
    if (p->pid <= 0)
        return;
    kill(p->pid, SIGTERM);
    if (tb_proc_wait(p, timeout, NULL))
        return;
    p->killed = true;
    kill(p->pid, SIGKILL);
    reap(p, 0);
}

void tb_proc_last_line(const struct tb_proc *p, char *buf, size_t size)
{
    char line[1024];
    FILE *f = fopen(p->log, "r");
    buf[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (line[0] != '\n')
            snprintf(buf, size, "%s", line);
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

void tb_proc_status_str(const struct tb_proc *p, char *buf, size_t size)
{
    if (!p->reaped)
        snprintf(buf, size, "running");
    else if (WIFEXITED(p->status))
        snprintf(buf, size, "exit %d", WEXITSTATUS(p->status));
    else if (WIFSIGNALED(p->status))
        snprintf(buf, size, "signal %d%s", WTERMSIG(p->status), p->killed ? " (killed)" : "");
    else
        snprintf(buf, size, "status %d", p->status);
}

void tb_proc_log(struct tb_proc *p, const char *dir, const char *name)
{
    /* Built aside, then copied: the name is often the element's own (struct tb_elem holds both
     * it and p), and GCC's -Wrestrict (the sanitized build) cannot tell the two fields apart. */
    char log[sizeof p->log];
    snprintf(log, sizeof log, "%s/%s.log", dir, name);
    memcpy(p->log, log, sizeof log);
}
