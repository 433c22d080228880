/* OpenACC runtime API for programs run by Yosegi. Under Yosegi (`__YOSEGI__` defined) the
 * functions are provided by the Yosegi runtime; compiled by a plain C compiler without OpenACC
 * the header gives the host-only behaviour, so the same program builds both ways. */
#ifndef YOSEGI_OPENACC_H
#define YOSEGI_OPENACC_H

typedef enum {
    acc_device_none = 0,
    acc_device_default = 1,
    acc_device_host = 2,
    acc_device_not_host = 3,
    acc_device_nvidia = 4
} acc_device_t;

#if defined(__YOSEGI__)
int acc_get_num_devices(acc_device_t device_type);
void acc_set_device_num(int num, acc_device_t device_type);
int acc_get_device_num(acc_device_t device_type);
acc_device_t acc_get_device_type(void);
void acc_set_device_type(acc_device_t device_type);
void acc_init(acc_device_t device_type);
void acc_shutdown(acc_device_t device_type);
int acc_on_device(acc_device_t device_type);
void acc_wait_all(void);
void acc_wait(long long queue);
#else
static inline int acc_get_num_devices(acc_device_t t) { return t == acc_device_host ? 1 : 0; }
static inline void acc_set_device_num(int n, acc_device_t t) { (void)n; (void)t; }
static inline int acc_get_device_num(acc_device_t t) { (void)t; return 0; }
static inline acc_device_t acc_get_device_type(void) { return acc_device_host; }
static inline void acc_set_device_type(acc_device_t t) { (void)t; }
static inline void acc_init(acc_device_t t) { (void)t; }
static inline void acc_shutdown(acc_device_t t) { (void)t; }
static inline int acc_on_device(acc_device_t t) { return t == acc_device_host; }
static inline void acc_wait_all(void) {}
static inline void acc_wait(long long q) { (void)q; }
#endif
#endif
