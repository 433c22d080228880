#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* Every call that opens a file for writing (tests/ranks.rs), as ranks: each file is written once (by rank 0),
   and every rank reads back what it wrote (a rank that reads otherwise exits with 3). */
static int reads(const char *path, const char *want) {
    char got[256] = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, got, sizeof got - 1);
    close(fd);
    return n >= 0 && strcmp(got, want) == 0;
}
int main(int argc, char **argv) {
    const char *dir = argv[1];
    char kept[512], made[512], created[512], reopened[512];
    snprintf(kept, sizeof kept, "%s/kept.txt", dir);
    snprintf(made, sizeof made, "%s/made.txt", dir);
    snprintf(created, sizeof created, "%s/created.txt", dir);
    snprintf(reopened, sizeof reopened, "%s/reopened.txt", dir);
    int n = 1 << 10;
    double *a = malloc(n * sizeof(double)), s = 0;
    #pragma acc parallel loop copyout(a[0:n])
    for (int i = 0; i < n; i++) a[i] = 0.5 * i;
    /* Appending keeps what the file held. */
    FILE *f = fopen(kept, "a");
    fprintf(f, "appended\n");
    fclose(f);
    int fd = open(kept, O_WRONLY | O_APPEND);
    if (write(fd, "more\n", 5) != 5) return 4;
    close(fd);
    f = fopen(kept, "r+");
    fprintf(f, "HEAD");
    fclose(f);
    if (!reads(kept, "HEAD\nappended\nmore\n")) return 3;
    fd = open(made, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (write(fd, "made\n", 5) != 5) return 4;
    close(fd);
    if (open(made, O_WRONLY | O_CREAT | O_EXCL, 0644) >= 0) return 5;
    fd = creat(created, 0644);
    if (write(fd, "created\n", 8) != 8) return 4;
    close(fd);
    f = fopen(made, "r");
    f = freopen(reopened, "w", f);
    fprintf(f, "%.1f\n", a[n - 1]);
    fclose(f);
    if (!reads(made, "made\n") || !reads(created, "created\n") || !reads(reopened, "511.5\n")) return 3;
    #pragma acc parallel loop copyin(a[0:n]) reduction(+:s)
    for (int i = 0; i < n; i++) s += a[i];
    printf("%.1f\n", s);
    return 0;
}
