/* The OpenACC runtime API (OpenACC 3.3, chapter 3) for programs run by Yosegi.
 *
 * Under Yosegi (`__YOSEGI__` defined) every routine is provided by the Yosegi runtime. Compiled
 * by a plain C compiler without OpenACC, the header gives the host-only behaviour the
 * specification describes for the host device (the data is in host memory, device addresses
 * are host addresses, queues are always idle), so the same program builds both ways. */
#ifndef YOSEGI_OPENACC_H
#define YOSEGI_OPENACC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    acc_device_none = 0,
    acc_device_default = 1,
    acc_device_host = 2,
    acc_device_not_host = 3,
    acc_device_nvidia = 4
} acc_device_t;

typedef enum {
    acc_property_memory = 1,
    acc_property_free_memory = 2,
    acc_property_shared_memory_support = 3,
    acc_property_name = 0x10000,
    acc_property_vendor = 0x10001,
    acc_property_driver = 0x10002
} acc_device_property_t;

/* Special async arguments. */
enum { acc_async_noval = -1, acc_async_sync = -2, acc_async_default = -3 };

/* Host and device addresses (the specification's notation). */
typedef void h_void;
typedef void d_void;

#if defined(__YOSEGI__)

/* 3.2.1-3.2.8: devices */
int acc_get_num_devices(acc_device_t dev_type);
void acc_set_device_type(acc_device_t dev_type);
acc_device_t acc_get_device_type(void);
void acc_set_device_num(int dev_num, acc_device_t dev_type);
int acc_get_device_num(acc_device_t dev_type);
size_t acc_get_property(int dev_num, acc_device_t dev_type, acc_device_property_t property);
const char *acc_get_property_string(int dev_num, acc_device_t dev_type, acc_device_property_t property);
void acc_init(acc_device_t dev_type);
void acc_init_device(int dev_num, acc_device_t dev_type);
void acc_shutdown(acc_device_t dev_type);
void acc_shutdown_device(int dev_num, acc_device_t dev_type);

/* 3.2.9-3.2.17: queues */
int acc_async_test(int wait_arg);
int acc_async_test_device(int wait_arg, int dev_num);
int acc_async_test_all(void);
int acc_async_test_all_device(int dev_num);
void acc_wait(int wait_arg);
void acc_wait_device(int wait_arg, int dev_num);
void acc_wait_async(int wait_arg, int async_arg);
void acc_wait_device_async(int wait_arg, int async_arg, int dev_num);
void acc_wait_all(void);
void acc_wait_all_device(int dev_num);
void acc_wait_all_async(int async_arg);
void acc_wait_all_device_async(int async_arg, int dev_num);
int acc_wait_any(int count, int wait_arg[]);
int acc_wait_any_device(int count, int wait_arg[], int dev_num);
int acc_get_default_async(void);
void acc_set_default_async(int async_arg);

/* 3.2.18 */
int acc_on_device(acc_device_t dev_type);

/* 3.2.19-3.2.37: memory and data */
d_void *acc_malloc(size_t bytes);
void acc_free(d_void *data_dev);
d_void *acc_copyin(h_void *data_arg, size_t bytes);
void acc_copyin_async(h_void *data_arg, size_t bytes, int async_arg);
d_void *acc_create(h_void *data_arg, size_t bytes);
void acc_create_async(h_void *data_arg, size_t bytes, int async_arg);
void acc_copyout(h_void *data_arg, size_t bytes);
void acc_copyout_async(h_void *data_arg, size_t bytes, int async_arg);
void acc_copyout_finalize(h_void *data_arg, size_t bytes);
void acc_copyout_finalize_async(h_void *data_arg, size_t bytes, int async_arg);
void acc_delete(h_void *data_arg, size_t bytes);
void acc_delete_async(h_void *data_arg, size_t bytes, int async_arg);
void acc_delete_finalize(h_void *data_arg, size_t bytes);
void acc_delete_finalize_async(h_void *data_arg, size_t bytes, int async_arg);
void acc_update_device(h_void *data_arg, size_t bytes);
void acc_update_device_async(h_void *data_arg, size_t bytes, int async_arg);
void acc_update_self(h_void *data_arg, size_t bytes);
void acc_update_self_async(h_void *data_arg, size_t bytes, int async_arg);
void acc_map_data(h_void *data_arg, d_void *data_dev, size_t bytes);
void acc_unmap_data(h_void *data_arg);
d_void *acc_deviceptr(h_void *data_arg);
h_void *acc_hostptr(d_void *data_dev);
int acc_is_present(h_void *data_arg, size_t bytes);
void acc_memcpy_to_device(d_void *data_dev_dest, h_void *data_host_src, size_t bytes);
void acc_memcpy_to_device_async(d_void *data_dev_dest, h_void *data_host_src, size_t bytes, int async_arg);
void acc_memcpy_from_device(h_void *data_host_dest, d_void *data_dev_src, size_t bytes);
void acc_memcpy_from_device_async(h_void *data_host_dest, d_void *data_dev_src, size_t bytes, int async_arg);
void acc_memcpy_device(d_void *data_dev_dest, d_void *data_dev_src, size_t bytes);
void acc_memcpy_device_async(d_void *data_dev_dest, d_void *data_dev_src, size_t bytes, int async_arg);
void acc_attach(h_void **ptr_addr);
void acc_attach_async(h_void **ptr_addr, int async_arg);
void acc_detach(h_void **ptr_addr);
void acc_detach_async(h_void **ptr_addr, int async_arg);
void acc_detach_finalize(h_void **ptr_addr);
void acc_detach_finalize_async(h_void **ptr_addr, int async_arg);
void acc_memcpy_d2d(h_void *data_arg_dest, h_void *data_arg_src, size_t bytes, int dev_num_dest, int dev_num_src);
void acc_memcpy_d2d_async(h_void *data_arg_dest, h_void *data_arg_src, size_t bytes, int dev_num_dest,
                          int dev_num_src, int async_arg_src);

/* Deprecated forms (OpenACC 2.0) */
d_void *acc_present_or_copyin(h_void *data_arg, size_t bytes);
d_void *acc_pcopyin(h_void *data_arg, size_t bytes);
d_void *acc_present_or_create(h_void *data_arg, size_t bytes);
d_void *acc_pcreate(h_void *data_arg, size_t bytes);
void acc_async_wait(int wait_arg);
void acc_async_wait_all(void);

/* CUDA interoperability (appendix A): every launch runs on the legacy default stream. */
void *acc_get_cuda_stream(int async_arg);
int acc_set_cuda_stream(int async_arg, void *stream);

#else /* host only */

#include <stdlib.h>
#include <string.h>

static inline int acc_get_num_devices(acc_device_t t) { return t == acc_device_host ? 1 : 0; }
static inline void acc_set_device_type(acc_device_t t) { (void)t; }
static inline acc_device_t acc_get_device_type(void) { return acc_device_host; }
static inline void acc_set_device_num(int n, acc_device_t t) { (void)n; (void)t; }
static inline int acc_get_device_num(acc_device_t t) { (void)t; return 0; }
static inline size_t acc_get_property(int n, acc_device_t t, acc_device_property_t p) {
    (void)n; (void)t; (void)p; return 0;
}
static inline const char *acc_get_property_string(int n, acc_device_t t, acc_device_property_t p) {
    (void)n; (void)t;
    switch (p) {
    case acc_property_name: return "host";
    case acc_property_vendor: return "host";
    case acc_property_driver: return "none";
    default: return NULL;
    }
}
static inline void acc_init(acc_device_t t) { (void)t; }
static inline void acc_init_device(int n, acc_device_t t) { (void)n; (void)t; }
static inline void acc_shutdown(acc_device_t t) { (void)t; }
static inline void acc_shutdown_device(int n, acc_device_t t) { (void)n; (void)t; }

static inline int acc_async_test(int q) { (void)q; return 1; }
static inline int acc_async_test_device(int q, int n) { (void)q; (void)n; return 1; }
static inline int acc_async_test_all(void) { return 1; }
static inline int acc_async_test_all_device(int n) { (void)n; return 1; }
static inline void acc_wait(int q) { (void)q; }
static inline void acc_wait_device(int q, int n) { (void)q; (void)n; }
static inline void acc_wait_async(int q, int a) { (void)q; (void)a; }
static inline void acc_wait_device_async(int q, int a, int n) { (void)q; (void)a; (void)n; }
static inline void acc_wait_all(void) {}
static inline void acc_wait_all_device(int n) { (void)n; }
static inline void acc_wait_all_async(int a) { (void)a; }
static inline void acc_wait_all_device_async(int a, int n) { (void)a; (void)n; }
static inline int acc_wait_any(int count, int wait_arg[]) {
    for (int i = 0; i < count; i++)
        if (wait_arg[i] != acc_async_sync) return i;
    return -1;
}
static inline int acc_wait_any_device(int count, int wait_arg[], int n) { (void)n; return acc_wait_any(count, wait_arg); }
static inline int acc_get_default_async(void) { return 0; }
static inline void acc_set_default_async(int a) { (void)a; }

static inline int acc_on_device(acc_device_t t) { return t == acc_device_host; }

static inline d_void *acc_malloc(size_t bytes) { return malloc(bytes); }
static inline void acc_free(d_void *d) { free(d); }
static inline d_void *acc_copyin(h_void *h, size_t bytes) { (void)bytes; return h; }
static inline void acc_copyin_async(h_void *h, size_t bytes, int a) { (void)h; (void)bytes; (void)a; }
static inline d_void *acc_create(h_void *h, size_t bytes) { (void)bytes; return h; }
static inline void acc_create_async(h_void *h, size_t bytes, int a) { (void)h; (void)bytes; (void)a; }
static inline void acc_copyout(h_void *h, size_t bytes) { (void)h; (void)bytes; }
static inline void acc_copyout_async(h_void *h, size_t bytes, int a) { (void)h; (void)bytes; (void)a; }
static inline void acc_copyout_finalize(h_void *h, size_t bytes) { (void)h; (void)bytes; }
static inline void acc_copyout_finalize_async(h_void *h, size_t bytes, int a) { (void)h; (void)bytes; (void)a; }
static inline void acc_delete(h_void *h, size_t bytes) { (void)h; (void)bytes; }
static inline void acc_delete_async(h_void *h, size_t bytes, int a) { (void)h; (void)bytes; (void)a; }
static inline void acc_delete_finalize(h_void *h, size_t bytes) { (void)h; (void)bytes; }
static inline void acc_delete_finalize_async(h_void *h, size_t bytes, int a) { (void)h; (void)bytes; (void)a; }
static inline void acc_update_device(h_void *h, size_t bytes) { (void)h; (void)bytes; }
static inline void acc_update_device_async(h_void *h, size_t bytes, int a) { (void)h; (void)bytes; (void)a; }
static inline void acc_update_self(h_void *h, size_t bytes) { (void)h; (void)bytes; }
static inline void acc_update_self_async(h_void *h, size_t bytes, int a) { (void)h; (void)bytes; (void)a; }
static inline void acc_map_data(h_void *h, d_void *d, size_t bytes) { (void)h; (void)d; (void)bytes; }
static inline void acc_unmap_data(h_void *h) { (void)h; }
static inline d_void *acc_deviceptr(h_void *h) { return h; }
static inline h_void *acc_hostptr(d_void *d) { return d; }
static inline int acc_is_present(h_void *h, size_t bytes) { (void)h; (void)bytes; return 1; }
static inline void acc_memcpy_to_device(d_void *d, h_void *h, size_t bytes) { if (bytes) memmove(d, h, bytes); }
static inline void acc_memcpy_to_device_async(d_void *d, h_void *h, size_t bytes, int a) {
    (void)a; acc_memcpy_to_device(d, h, bytes);
}
static inline void acc_memcpy_from_device(h_void *h, d_void *d, size_t bytes) { if (bytes) memmove(h, d, bytes); }
static inline void acc_memcpy_from_device_async(h_void *h, d_void *d, size_t bytes, int a) {
    (void)a; acc_memcpy_from_device(h, d, bytes);
}
static inline void acc_memcpy_device(d_void *dst, d_void *src, size_t bytes) { if (bytes) memmove(dst, src, bytes); }
static inline void acc_memcpy_device_async(d_void *dst, d_void *src, size_t bytes, int a) {
    (void)a; acc_memcpy_device(dst, src, bytes);
}
static inline void acc_attach(h_void **p) { (void)p; }
static inline void acc_attach_async(h_void **p, int a) { (void)p; (void)a; }
static inline void acc_detach(h_void **p) { (void)p; }
static inline void acc_detach_async(h_void **p, int a) { (void)p; (void)a; }
static inline void acc_detach_finalize(h_void **p) { (void)p; }
static inline void acc_detach_finalize_async(h_void **p, int a) { (void)p; (void)a; }
static inline void acc_memcpy_d2d(h_void *dst, h_void *src, size_t bytes, int dn, int sn) {
    (void)dn; (void)sn; if (bytes) memmove(dst, src, bytes);
}
static inline void acc_memcpy_d2d_async(h_void *dst, h_void *src, size_t bytes, int dn, int sn, int a) {
    (void)a; acc_memcpy_d2d(dst, src, bytes, dn, sn);
}

static inline d_void *acc_present_or_copyin(h_void *h, size_t bytes) { return acc_copyin(h, bytes); }
static inline d_void *acc_pcopyin(h_void *h, size_t bytes) { return acc_copyin(h, bytes); }
static inline d_void *acc_present_or_create(h_void *h, size_t bytes) { return acc_create(h, bytes); }
static inline d_void *acc_pcreate(h_void *h, size_t bytes) { return acc_create(h, bytes); }
static inline void acc_async_wait(int q) { (void)q; }
static inline void acc_async_wait_all(void) {}

static inline void *acc_get_cuda_stream(int a) { (void)a; return NULL; }
static inline int acc_set_cuda_stream(int a, void *s) { (void)a; (void)s; return 0; }

#endif

#ifdef __cplusplus
}
#endif
#endif
