/* The interface between a program's host code (compiled by the system C compiler into a shared
 * object) and the Yosegi runtime inside the `yosegi` process. The runtime hands the program a
 * table of entry points; the generated host code calls only through it. */
#ifndef YOSEGI_RT_H
#define YOSEGI_RT_H
#include <stddef.h>

/* One argument of a region: the runtime knows from the region's description which field is
 * meaningful (ptr for pointers and scalar outputs, i for integers, f for floating values).
 * size is the object's size in bytes when the host knows it (sizeof of an array), else 0. */
typedef struct yosegi_arg {
    void *ptr;
    long long i;
    double f;
    long long size;
} yosegi_arg;

enum { YOSEGI_READ = 1, YOSEGI_WRITE = 2 };

typedef struct yosegi_runtime {
    int abi_version; /* YOSEGI_ABI_VERSION */
    /* compute regions, enter/exit data, update, wait */
    void (*region)(int id, yosegi_arg *args, int nargs);
    /* structured data regions: enter before the body, exit after it */
    void (*data_enter)(int id, yosegi_arg *args, int nargs);
    void (*data_exit)(int id, yosegi_arg *args, int nargs);
    /* host code is about to read (YOSEGI_READ) and/or write (YOSEGI_WRITE) the objects that
     * contain these addresses: make the host copies valid, and the device copies stale when
     * written. Addresses of objects the runtime does not track are ignored. */
    void (*host_access)(void *const *ptrs, const int *modes, int n);
    /* the same for every tracked object (when the compiler cannot tell what host code touches) */
    void (*host_access_all)(void);
    void *(*malloc)(size_t n);
    void *(*calloc)(size_t n, size_t size);
    void *(*realloc)(void *p, size_t n);
    void (*free)(void *p);
    /* a file-scope array the program defines, so its extent is known */
    void (*register_static)(void *ptr, long long bytes, const char *name);
    /* called at exit (after stdio is flushed) */
    void (*at_exit)(void);
    /* the OpenACC runtime API */
    int (*acc_get_num_devices)(int device_type);
    void (*acc_set_device_num)(int num, int device_type);
    int (*acc_get_device_num)(int device_type);
    int (*acc_get_device_type)(void);
    void (*acc_set_device_type)(int device_type);
    void (*acc_init)(int device_type);
    void (*acc_shutdown)(int device_type);
    int (*acc_on_device)(int device_type);
    void (*acc_wait_all)(void);
    void (*acc_wait)(long long queue);
} yosegi_runtime;

#define YOSEGI_ABI_VERSION 1

extern yosegi_runtime *__yosegi_rt;
#endif
