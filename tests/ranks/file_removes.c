/* `rename`, `remove` and `unlink` in a job of several ranks: each acts once, on rank 0, and
 * every rank's program sees the answers one process sees (the program exits with 3 where one
 * differs). DIR (argv[1]) holds `kept.txt` before the run and nothing after it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    char written[4096], renamed[4096], kept[4096];
    snprintf(written, sizeof written, "%s/written.txt", argv[1]);
    snprintf(renamed, sizeof renamed, "%s/renamed.txt", argv[1]);
    snprintf(kept, sizeof kept, "%s/kept.txt", argv[1]);
    int n = 1024;
    double *x = malloc(n * sizeof(double)), s = 0, v = 0;
    #pragma acc parallel loop copyout(x[0:n])
    for (int i = 0; i < n; i++) x[i] = 0.5 * i;

    FILE *f = fopen(written, "w");
    fprintf(f, "%.1f\n", x[n - 1]);
    fclose(f);
    if (rename(written, renamed) != 0) return 3; /* the file this program wrote moves */
    FILE *g = fopen(renamed, "r");
    if (!g || fscanf(g, "%lf", &v) != 1 || v != 511.5) return 3;
    fclose(g);
    if (fopen(written, "r") != NULL) return 3; /* gone under its old name */
    if (remove(renamed) != 0) return 3;
    errno = 0;
    if (remove(renamed) != -1 || errno != ENOENT) return 3; /* the second removal fails */
    if (rename(kept, written) != 0) return 3;               /* a file the program did not write */
    if (unlink(written) != 0) return 3;
    if (unlink(kept) != -1 || errno != ENOENT) return 3;

    #pragma acc parallel loop copyin(x[0:n]) reduction(+:s)
    for (int i = 0; i < n; i++) s += x[i];
    printf("%.1f\n", s);
    return 0;
}
