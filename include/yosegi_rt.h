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
enum { YOSEGI_ACC_COPY = 1, YOSEGI_ACC_FINALIZE = 2 };
enum { YOSEGI_ACC_TO_DEVICE = 0, YOSEGI_ACC_FROM_DEVICE = 1, YOSEGI_ACC_DEVICE_TO_DEVICE = 2 };
#define YOSEGI_CURRENT_DEVICE (-2147483647 - 1)

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
    int (*posix_memalign)(void **p, size_t align, size_t n);
    void *(*aligned_alloc)(size_t align, size_t n);
    /* a file-scope array the program defines, so its extent is known */
    void (*register_static)(void *ptr, long long bytes, const char *name);
    /* called at exit (after stdio is flushed) */
    void (*at_exit)(void);
    /* the OpenACC runtime API (openacc.h; the glue defines each routine through these).
     * Device types, properties and async queues travel as ints; `call` is the routine's name,
     * for error messages; `dev_num` is YOSEGI_CURRENT_DEVICE for the routines without one. */
    int (*acc_get_num_devices)(int device_type);
    void (*acc_set_device_num)(int num, int device_type);
    int (*acc_get_device_num)(int device_type);
    int (*acc_get_device_type)(void);
    void (*acc_set_device_type)(const char *call, int device_type);
    void (*acc_init)(const char *call, int dev_num, int device_type);
    void (*acc_shutdown)(const char *call, int dev_num, int device_type);
    int (*acc_on_device)(int device_type);
    size_t (*acc_get_property)(const char *call, int dev_num, int device_type, int property);
    const char *(*acc_get_property_string)(const char *call, int dev_num, int device_type, int property);
    /* waits for `queues` (n of them; n < 0: all queues) of device `dev_num` */
    void (*acc_wait)(const char *call, const int *queues, int n, int dev_num);
    /* acc_async_test*: nonzero when the queues are idle */
    int (*acc_async_test)(const char *call, const int *queues, int n, int dev_num);
    int (*acc_wait_any)(const char *call, const int *queues, int n, int dev_num);
    int (*acc_get_default_async)(void);
    void (*acc_set_default_async)(const char *call, int queue);
    void *(*acc_malloc)(size_t bytes);
    void (*acc_free)(const char *call, void *d);
    /* acc_copyin/acc_create (flags: YOSEGI_ACC_COPY): the device address */
    void *(*acc_enter_data)(const char *call, void *h, size_t bytes, int flags, int queue);
    /* acc_copyout/acc_delete (flags: YOSEGI_ACC_COPY, YOSEGI_ACC_FINALIZE) */
    void (*acc_exit_data)(const char *call, void *h, size_t bytes, int flags, int queue);
    void (*acc_update)(const char *call, void *h, size_t bytes, int to_device, int queue);
    void (*acc_map_data)(const char *call, void *h, void *d, size_t bytes);
    void (*acc_unmap_data)(const char *call, void *h);
    void *(*acc_deviceptr)(void *h);
    void *(*acc_hostptr)(void *d);
    int (*acc_is_present)(void *h, size_t bytes);
    /* direction: YOSEGI_ACC_TO_DEVICE, YOSEGI_ACC_FROM_DEVICE, YOSEGI_ACC_DEVICE_TO_DEVICE */
    void (*acc_memcpy)(const char *call, void *dst, const void *src, size_t bytes, int direction, int queue);
    void (*acc_memcpy_d2d)(const char *call, void *dst, const void *src, size_t bytes, int dst_dev, int src_dev, int queue);
    /* acc_attach/acc_detach and their forms */
    void (*acc_attach)(const char *call, void **ptr_addr, int queue);
    /* a compute region that is the whole body of a time-step loop with `left` iterations left
     * (at least 1): runs one or more of them, and returns how many */
    long long (*region_steps)(int id, yosegi_arg *args, int nargs, long long left);
    /* host_access for parts of objects: host code is about to touch `lens[k]` bytes at
     * `ptrs[k]` (one element it reads or writes), so only those bytes move or go stale */
    void (*host_access_range)(void *const *ptrs, const unsigned long long *lens, const int *modes, int n);
    /* in a job of several ranks, waits until every rank has come here (`what` names the
     * operation, for the error when one does not); alone, returns at once */
    void (*rank_meet)(const char *what);
    /* in a job of several ranks, the `bytes` at `data` become rank 0's on every rank (`what`
     * names the value, for the error when a rank does not come); alone, nothing */
    void (*rank_share)(void *data, size_t bytes, const char *what);
} yosegi_runtime;

#define YOSEGI_ABI_VERSION 7

extern yosegi_runtime *__yosegi_rt;
#endif
