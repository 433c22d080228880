// Two blurs and a sharpening pass in one region: fused into one kernel with redundant
// iterations, the scratch array `t` (the host only allocates and frees it) never stored.
#include <stdlib.h>

void blur(int n, int m, double (*restrict in)[m], double (*restrict out)[m]) {
    double (*t)[m] = malloc(sizeof(double[n][m]));
    #pragma acc kernels copyin(in[0:n][0:m]) copyout(out[0:n][0:m]) create(t[0:n][0:m])
    {
        #pragma acc loop independent collapse(2)
        for (int j = 1; j < n - 1; j++)
            for (int i = 0; i < m; i++)
                t[j][i] = 0.25 * in[j - 1][i] + 0.5 * in[j][i] + 0.25 * in[j + 1][i];
        #pragma acc loop independent collapse(2)
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < m - 1; i++)
                out[j][i] = 0.25 * t[j][i - 1] + 0.5 * t[j][i] + 0.25 * t[j][i + 1];
    }
    free(t);
}
