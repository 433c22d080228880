/* The OpenACC runtime API of include/openacc.h, each routine forwarding to the runtime's table
 * (yosegi_rt.h). Part of the generated glue file, after both headers. */

#define YOSEGI_RT __yosegi_rt
#define YOSEGI_CUR YOSEGI_CURRENT_DEVICE

int acc_get_num_devices(acc_device_t t) { return YOSEGI_RT->acc_get_num_devices((int)t); }
void acc_set_device_type(acc_device_t t) { YOSEGI_RT->acc_set_device_type("acc_set_device_type", (int)t); }
acc_device_t acc_get_device_type(void) { return (acc_device_t)YOSEGI_RT->acc_get_device_type(); }
void acc_set_device_num(int n, acc_device_t t) { YOSEGI_RT->acc_set_device_num(n, (int)t); }
int acc_get_device_num(acc_device_t t) { return YOSEGI_RT->acc_get_device_num((int)t); }
size_t acc_get_property(int n, acc_device_t t, acc_device_property_t p) {
    return YOSEGI_RT->acc_get_property("acc_get_property", n, (int)t, (int)p);
}
const char *acc_get_property_string(int n, acc_device_t t, acc_device_property_t p) {
    return YOSEGI_RT->acc_get_property_string("acc_get_property_string", n, (int)t, (int)p);
}
void acc_init(acc_device_t t) { YOSEGI_RT->acc_init("acc_init", YOSEGI_CUR, (int)t); }
void acc_init_device(int n, acc_device_t t) { YOSEGI_RT->acc_init("acc_init_device", n, (int)t); }
void acc_shutdown(acc_device_t t) { YOSEGI_RT->acc_shutdown("acc_shutdown", YOSEGI_CUR, (int)t); }
void acc_shutdown_device(int n, acc_device_t t) { YOSEGI_RT->acc_shutdown("acc_shutdown_device", n, (int)t); }

int acc_async_test(int q) { return YOSEGI_RT->acc_async_test("acc_async_test", &q, 1, YOSEGI_CUR); }
int acc_async_test_device(int q, int n) { return YOSEGI_RT->acc_async_test("acc_async_test_device", &q, 1, n); }
int acc_async_test_all(void) { return YOSEGI_RT->acc_async_test("acc_async_test_all", 0, -1, YOSEGI_CUR); }
int acc_async_test_all_device(int n) { return YOSEGI_RT->acc_async_test("acc_async_test_all_device", 0, -1, n); }
void acc_wait(int q) { YOSEGI_RT->acc_wait("acc_wait", &q, 1, YOSEGI_CUR); }
void acc_wait_device(int q, int n) { YOSEGI_RT->acc_wait("acc_wait_device", &q, 1, n); }
void acc_wait_async(int q, int a) {
    int qs[2] = {q, a};
    YOSEGI_RT->acc_wait("acc_wait_async", qs, 2, YOSEGI_CUR);
}
void acc_wait_device_async(int q, int a, int n) {
    int qs[2] = {q, a};
    YOSEGI_RT->acc_wait("acc_wait_device_async", qs, 2, n);
}
void acc_wait_all(void) { YOSEGI_RT->acc_wait("acc_wait_all", 0, -1, YOSEGI_CUR); }
void acc_wait_all_device(int n) { YOSEGI_RT->acc_wait("acc_wait_all_device", 0, -1, n); }
void acc_wait_all_async(int a) { YOSEGI_RT->acc_wait("acc_wait_all_async", &a, 1, YOSEGI_CUR); }
void acc_wait_all_device_async(int a, int n) { YOSEGI_RT->acc_wait("acc_wait_all_device_async", &a, 1, n); }
int acc_wait_any(int count, int wait_arg[]) { return YOSEGI_RT->acc_wait_any("acc_wait_any", wait_arg, count, YOSEGI_CUR); }
int acc_wait_any_device(int count, int wait_arg[], int n) {
    return YOSEGI_RT->acc_wait_any("acc_wait_any_device", wait_arg, count, n);
}
int acc_get_default_async(void) { return YOSEGI_RT->acc_get_default_async(); }
void acc_set_default_async(int a) { YOSEGI_RT->acc_set_default_async("acc_set_default_async", a); }
void acc_async_wait(int q) { YOSEGI_RT->acc_wait("acc_async_wait", &q, 1, YOSEGI_CUR); }
void acc_async_wait_all(void) { YOSEGI_RT->acc_wait("acc_async_wait_all", 0, -1, YOSEGI_CUR); }

int acc_on_device(acc_device_t t) { return YOSEGI_RT->acc_on_device((int)t); }

d_void *acc_malloc(size_t bytes) { return YOSEGI_RT->acc_malloc(bytes); }
void acc_free(d_void *d) { YOSEGI_RT->acc_free("acc_free", d); }

#define YOSEGI_ENTER(name, flags) \
    d_void *name(h_void *h, size_t bytes) { return YOSEGI_RT->acc_enter_data(#name, h, bytes, flags, acc_async_sync); }
#define YOSEGI_ENTER_ASYNC(name, flags) \
    void name(h_void *h, size_t bytes, int a) { YOSEGI_RT->acc_enter_data(#name, h, bytes, flags, a); }
YOSEGI_ENTER(acc_copyin, YOSEGI_ACC_COPY)
YOSEGI_ENTER_ASYNC(acc_copyin_async, YOSEGI_ACC_COPY)
YOSEGI_ENTER(acc_present_or_copyin, YOSEGI_ACC_COPY)
YOSEGI_ENTER(acc_pcopyin, YOSEGI_ACC_COPY)
YOSEGI_ENTER(acc_create, 0)
YOSEGI_ENTER_ASYNC(acc_create_async, 0)
YOSEGI_ENTER(acc_present_or_create, 0)
YOSEGI_ENTER(acc_pcreate, 0)

#define YOSEGI_EXIT(name, flags) \
    void name(h_void *h, size_t bytes) { YOSEGI_RT->acc_exit_data(#name, h, bytes, flags, acc_async_sync); }
#define YOSEGI_EXIT_ASYNC(name, flags) \
    void name(h_void *h, size_t bytes, int a) { YOSEGI_RT->acc_exit_data(#name, h, bytes, flags, a); }
YOSEGI_EXIT(acc_copyout, YOSEGI_ACC_COPY)
YOSEGI_EXIT_ASYNC(acc_copyout_async, YOSEGI_ACC_COPY)
YOSEGI_EXIT(acc_copyout_finalize, YOSEGI_ACC_COPY | YOSEGI_ACC_FINALIZE)
YOSEGI_EXIT_ASYNC(acc_copyout_finalize_async, YOSEGI_ACC_COPY | YOSEGI_ACC_FINALIZE)
YOSEGI_EXIT(acc_delete, 0)
YOSEGI_EXIT_ASYNC(acc_delete_async, 0)
YOSEGI_EXIT(acc_delete_finalize, YOSEGI_ACC_FINALIZE)
YOSEGI_EXIT_ASYNC(acc_delete_finalize_async, YOSEGI_ACC_FINALIZE)

void acc_update_device(h_void *h, size_t bytes) { YOSEGI_RT->acc_update("acc_update_device", h, bytes, 1, acc_async_sync); }
void acc_update_device_async(h_void *h, size_t bytes, int a) {
    YOSEGI_RT->acc_update("acc_update_device_async", h, bytes, 1, a);
}
void acc_update_self(h_void *h, size_t bytes) { YOSEGI_RT->acc_update("acc_update_self", h, bytes, 0, acc_async_sync); }
void acc_update_self_async(h_void *h, size_t bytes, int a) { YOSEGI_RT->acc_update("acc_update_self_async", h, bytes, 0, a); }

void acc_map_data(h_void *h, d_void *d, size_t bytes) { YOSEGI_RT->acc_map_data("acc_map_data", h, d, bytes); }
void acc_unmap_data(h_void *h) { YOSEGI_RT->acc_unmap_data("acc_unmap_data", h); }
d_void *acc_deviceptr(h_void *h) { return YOSEGI_RT->acc_deviceptr(h); }
h_void *acc_hostptr(d_void *d) { return YOSEGI_RT->acc_hostptr(d); }
int acc_is_present(h_void *h, size_t bytes) { return YOSEGI_RT->acc_is_present(h, bytes); }

void acc_memcpy_to_device(d_void *d, h_void *h, size_t bytes) {
    YOSEGI_RT->acc_memcpy("acc_memcpy_to_device", d, h, bytes, YOSEGI_ACC_TO_DEVICE, acc_async_sync);
}
void acc_memcpy_to_device_async(d_void *d, h_void *h, size_t bytes, int a) {
    YOSEGI_RT->acc_memcpy("acc_memcpy_to_device_async", d, h, bytes, YOSEGI_ACC_TO_DEVICE, a);
}
void acc_memcpy_from_device(h_void *h, d_void *d, size_t bytes) {
    YOSEGI_RT->acc_memcpy("acc_memcpy_from_device", h, d, bytes, YOSEGI_ACC_FROM_DEVICE, acc_async_sync);
}
void acc_memcpy_from_device_async(h_void *h, d_void *d, size_t bytes, int a) {
    YOSEGI_RT->acc_memcpy("acc_memcpy_from_device_async", h, d, bytes, YOSEGI_ACC_FROM_DEVICE, a);
}
void acc_memcpy_device(d_void *dst, d_void *src, size_t bytes) {
    YOSEGI_RT->acc_memcpy("acc_memcpy_device", dst, src, bytes, YOSEGI_ACC_DEVICE_TO_DEVICE, acc_async_sync);
}
void acc_memcpy_device_async(d_void *dst, d_void *src, size_t bytes, int a) {
    YOSEGI_RT->acc_memcpy("acc_memcpy_device_async", dst, src, bytes, YOSEGI_ACC_DEVICE_TO_DEVICE, a);
}
void acc_memcpy_d2d(h_void *dst, h_void *src, size_t bytes, int dn, int sn) {
    YOSEGI_RT->acc_memcpy_d2d("acc_memcpy_d2d", dst, src, bytes, dn, sn, acc_async_sync);
}
void acc_memcpy_d2d_async(h_void *dst, h_void *src, size_t bytes, int dn, int sn, int a) {
    YOSEGI_RT->acc_memcpy_d2d("acc_memcpy_d2d_async", dst, src, bytes, dn, sn, a);
}

void acc_attach(h_void **p) { YOSEGI_RT->acc_attach("acc_attach", p, acc_async_sync); }
void acc_attach_async(h_void **p, int a) { YOSEGI_RT->acc_attach("acc_attach_async", p, a); }
void acc_detach(h_void **p) { YOSEGI_RT->acc_attach("acc_detach", p, acc_async_sync); }
void acc_detach_async(h_void **p, int a) { YOSEGI_RT->acc_attach("acc_detach_async", p, a); }
void acc_detach_finalize(h_void **p) { YOSEGI_RT->acc_attach("acc_detach_finalize", p, acc_async_sync); }
void acc_detach_finalize_async(h_void **p, int a) { YOSEGI_RT->acc_attach("acc_detach_finalize_async", p, a); }

/* Every launch runs on the legacy default stream (NULL), which orders it with the program's
 * blocking streams; another stream is not taken (0). */
void *acc_get_cuda_stream(int a) { (void)a; return 0; }
int acc_set_cuda_stream(int a, void *s) { (void)a; (void)s; return 0; }

#undef YOSEGI_RT
#undef YOSEGI_CUR
