#include "CJXL.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <jxl/version.h>

static alcedo_jxl_api table;
static const alcedo_jxl_api *loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    /* libjxl's soname carries its minor version (0.7); the unversioned name is the -dev link. */
    static const char *const names[] = { "libjxl.so.0.7", "libjxl.so" };
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "libjxl.so.0.7 could not be loaded: %s", reason ? reason : "not found");
        return;
    }
#define ALCEDO_JXL_RESOLVE(name) \
    *(void **)(&table.name) = dlsym(library, #name); \
    if (table.name == NULL) { \
        snprintf(failure, sizeof failure, "libjxl lacks %s", #name); \
        return; \
    }
    ALCEDO_JXL_FUNCTIONS(ALCEDO_JXL_RESOLVE)
#undef ALCEDO_JXL_RESOLVE
    uint32_t version = table.JxlDecoderVersion();
    uint32_t built = JPEGXL_MAJOR_VERSION * 1000000u + JPEGXL_MINOR_VERSION * 1000u;
    /* 0.x releases change the ABI between minor versions: the same major and minor as the header. */
    if (version / 1000u != built / 1000u) {
        snprintf(failure, sizeof failure, "libjxl %u.%u is loaded, Alcedo was built for %u.%u",
                 version / 1000000u, (version / 1000u) % 1000u, built / 1000000u, (built / 1000u) % 1000u);
        return;
    }
    loaded = &table;
}

const alcedo_jxl_api *alcedo_jxl_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *alcedo_jxl_load_error(void) {
    pthread_once(&once, load);
    return loaded ? NULL : failure;
}

static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void alcedo_jxl_budget_start(alcedo_jxl_budget *budget, int64_t limit_ns) {
    budget->start_ns = thread_cpu_ns();
    budget->limit_ns = limit_ns;
    budget->expired = 0;
}

JxlParallelRetCode alcedo_jxl_serial_runner(void *runner_opaque, void *jpegxl_opaque, JxlParallelRunInit init,
                                            JxlParallelRunFunction func, uint32_t start_range, uint32_t end_range) {
    alcedo_jxl_budget *budget = runner_opaque;
    JxlParallelRetCode status = init(jpegxl_opaque, 1);
    if (status != 0) return status;
    for (uint32_t i = start_range; i < end_range; i++) {
        if (budget != NULL && thread_cpu_ns() - budget->start_ns > budget->limit_ns) {
            budget->expired = 1;
            return JXL_PARALLEL_RET_RUNNER_ERROR;
        }
        func(jpegxl_opaque, i, 0);
    }
    return 0;
}
