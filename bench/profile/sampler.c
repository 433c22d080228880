// A CPU-time sampler to preload into a program (bench/profile/lu-stats-profile.sh): SIGPROF
// every 1 ms of process CPU time; each sample keeps the interrupted PC and a short backtrace;
// at exit it writes $SAMPLER_OUT.PID (frames in hex) and $SAMPLER_OUT.PID.maps.
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>
#include <fcntl.h>
#define MAXS 400000
#define DEPTH 12
static void *frames[MAXS][DEPTH];
static unsigned char depth[MAXS];
static volatile long n;
static void handler(int sig, siginfo_t *si, void *uc_) {
    (void)sig; (void)si;
    long i = __sync_fetch_and_add(&n, 1);
    if (i >= MAXS) return;
    ucontext_t *uc = uc_;
    frames[i][0] = (void *)uc->uc_mcontext.gregs[REG_RIP];
    void *bt[DEPTH + 2];
    int d = backtrace(bt, DEPTH + 2);
    // bt[0] handler, bt[1] signal trampoline; bt[2..] the interrupted frames' callers
    int k = 1;
    for (int j = 3; j < d && k < DEPTH; j++) frames[i][k++] = bt[j];
    depth[i] = k;
}
__attribute__((constructor)) static void start(void) {
    if (!getenv("SAMPLER_OUT")) return;
    void *tmp[4]; backtrace(tmp, 4);
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler; sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, 0);
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_PROF, &it, 0);
}
__attribute__((destructor)) static void stop(void) {
    const char *out = getenv("SAMPLER_OUT");
    if (!out) return;
    struct itimerval it = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &it, 0);
    char path[512]; snprintf(path, sizeof path, "%s.%d", out, getpid());
    FILE *f = fopen(path, "w");
    long m = n < MAXS ? n : MAXS;
    for (long i = 0; i < m; i++) {
        for (int j = 0; j < depth[i]; j++) fprintf(f, "%lx ", (unsigned long)frames[i][j]);
        fputc('\n', f);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s.%d.maps", out, getpid());
    FILE *g = fopen(path, "w"); FILE *mp = fopen("/proc/self/maps", "r");
    char buf[4096]; size_t r;
    while ((r = fread(buf, 1, sizeof buf, mp)) > 0) fwrite(buf, 1, r, g);
    fclose(mp); fclose(g);
}
