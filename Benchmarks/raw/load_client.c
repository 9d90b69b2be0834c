/*
 * A lean HTTP/1.1 load client for Benchmarks/compare-server.
 *
 *     load_client URL_FILE [CONCURRENCY]
 *
 * Requests every URL of URL_FILE (one per line, all http:// on one host and
 * port) exactly once, CONCURRENCY (default 16) at a time: one thread and one
 * keep-alive connection per slot, each taking the next unrequested URL.
 * Prints one JSON line with the fields compare-server reads: requests,
 * concurrency, failures (a status other than 200, or a connection or parse
 * error), seconds, requests_per_s, p50_ms and p99_ms (each request's latency,
 * from sending it to having read the whole body), bytes (of the bodies of
 * successful responses) and client_cpu_s (this process's user + system time).
 *
 * Why C: on two cores, the aiohttp client it replaced spent 0.45 ms of CPU per
 * request, about 7% of the machine while imago serve ran, which the server
 * then did not have. This one spends a few microseconds.
 *
 * Bodies may be sized by Content-Length or sent chunked; a server that
 * closes the connection gets a new one for the next request.
 *
 * With LOAD_CLIENT_TRACE=FILE it also writes one line per request to FILE:
 * when it was sent (ms from the start), its latency in ms, its status, and
 * the response's Server-Timing header (imago serve's wait, load, decode and
 * render), to see where a slow request spent its time.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static char **paths;
static size_t path_count;
static char host[256];
static char port[16];
static struct addrinfo *address;
static atomic_size_t next_index;
static double *latencies;     /* ms, by URL index */
static int *succeeded;        /* 1 when the URL's response was a 200 with a whole body */
static long long *body_bytes; /* by URL index */
static double *sent_at;       /* ms from the start, by URL index (traced runs) */
static int *statuses;         /* by URL index (traced runs) */
static char (*timings)[160];  /* each response's Server-Timing (traced runs) */
static double run_started;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int connect_server(void) {
    int fd = socket(address->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval timeout = {.tv_sec = 300};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    if (connect(fd, address->ai_addr, address->ai_addrlen) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A connection's receive buffer: bytes [start, end) are read, not yet used. */
typedef struct {
    int fd;
    char *data;
    size_t capacity, start, end;
} Connection;

/* Reads more bytes into the buffer; 0 on success, -1 on error or EOF. */
static int fill(Connection *c) {
    if (c->start > 0 && c->start == c->end) c->start = c->end = 0;
    if (c->end == c->capacity) {
        if (c->start > 0) {
            memmove(c->data, c->data + c->start, c->end - c->start);
            c->end -= c->start;
            c->start = 0;
        } else {
            c->capacity *= 2;
            c->data = realloc(c->data, c->capacity);
            if (!c->data) return -1;
        }
    }
    ssize_t n;
    do n = recv(c->fd, c->data + c->end, c->capacity - c->end, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return -1;
    c->end += (size_t)n;
    return 0;
}

/* Finds "\r\n" at or after the buffer's start; returns its offset from start, or -1. */
static long find_line_end(Connection *c, size_t from) {
    for (size_t i = c->start + from; i + 1 < c->end; i++)
        if (c->data[i] == '\r' && c->data[i + 1] == '\n') return (long)(i - c->start);
    return -1;
}

/* Skips `count` body bytes; 0 on success. */
static int skip(Connection *c, long long count) {
    while (count > 0) {
        if (c->start == c->end && fill(c) != 0) return -1;
        size_t available = c->end - c->start;
        size_t used = (long long)available < count ? available : (size_t)count;
        c->start += used;
        count -= (long long)used;
    }
    return 0;
}

/* Reads one response; sets *status, *bytes and *keep_alive. 0 on success. */
static int read_response(Connection *c, int *status, long long *bytes, int *keep_alive, char *timing, size_t timing_size) {
    long header_end;
    for (;;) {
        header_end = -1;
        for (size_t i = c->start; i + 3 < c->end; i++)
            if (memcmp(c->data + i, "\r\n\r\n", 4) == 0) { header_end = (long)(i - c->start); break; }
        if (header_end >= 0) break;
        if (fill(c) != 0) return -1;
    }
    char *head = c->data + c->start;
    head[header_end] = '\0';
    if (strncmp(head, "HTTP/1.", 7) != 0 || strlen(head) < 12) return -1;
    *status = atoi(head + 9);
    *keep_alive = head[7] == '1';
    long long length = -1;
    int chunked = 0;
    for (char *line = strstr(head, "\r\n"); line; line = strstr(line, "\r\n")) {
        line += 2;
        if (strncasecmp(line, "content-length:", 15) == 0) length = atoll(line + 15);
        else if (strncasecmp(line, "transfer-encoding:", 18) == 0 && strcasestr(line, "chunked")) chunked = 1;
        else if (timing && strncasecmp(line, "server-timing:", 14) == 0) {
            const char *value = line + 14 + strspn(line + 14, " ");
            size_t length = strcspn(value, "\r");
            snprintf(timing, timing_size, "%.*s", (int)length, value);
        }
        else if (strncasecmp(line, "connection:", 11) == 0) {
            if (strcasestr(line, "close")) *keep_alive = 0;
            else if (strcasestr(line, "keep-alive")) *keep_alive = 1;
        }
    }
    c->start += (size_t)header_end + 4;
    *bytes = 0;
    if (chunked) {
        for (;;) {
            long line_end;
            while ((line_end = find_line_end(c, 0)) < 0)
                if (fill(c) != 0) return -1;
            long long size = strtoll(c->data + c->start, NULL, 16);
            c->start += (size_t)line_end + 2;
            if (size == 0) {  /* trailers, then an empty line */
                for (;;) {
                    while ((line_end = find_line_end(c, 0)) < 0)
                        if (fill(c) != 0) return -1;
                    c->start += (size_t)line_end + 2;
                    if (line_end == 0) return 0;
                }
            }
            if (skip(c, size + 2) != 0) return -1;
            *bytes += size;
        }
    }
    if (length < 0) return -1;  /* a body delimited by closing the connection is not supported */
    if (skip(c, length) != 0) return -1;
    *bytes = length;
    return 0;
}

static int send_all(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t n = send(fd, data, length, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        data += n;
        length -= (size_t)n;
    }
    return 0;
}

static void *worker(void *unused) {
    (void)unused;
    Connection c = {.fd = -1, .capacity = 1 << 16};
    c.data = malloc(c.capacity);
    char request[8192];
    for (;;) {
        size_t index = atomic_fetch_add(&next_index, 1);
        if (index >= path_count) break;
        int length = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: %s:%s\r\nAccept: */*\r\n\r\n",
                              paths[index], host, port);
        double started = now_ms();
        if (sent_at) sent_at[index] = started - run_started;
        char *timing = timings ? timings[index] : NULL;
        int status = 0, keep_alive = 0, ok = 0;
        long long bytes = 0;
        for (int attempt = 0; attempt < 2 && !ok; attempt++) {
            /* A kept-alive connection the server closed while idle is retried once, on a new one. */
            int reused = c.fd >= 0;
            if (c.fd < 0 && (c.fd = connect_server()) < 0) break;
            c.start = c.end = 0;
            if (length > 0 && (size_t)length < sizeof request && send_all(c.fd, request, (size_t)length) == 0
                && read_response(&c, &status, &bytes, &keep_alive, timing, sizeof timings[0]) == 0) {
                ok = 1;
            } else {
                close(c.fd);
                c.fd = -1;
                if (!reused) break;
            }
        }
        latencies[index] = now_ms() - started;
        succeeded[index] = ok && status == 200;
        body_bytes[index] = bytes;
        if (statuses) statuses[index] = ok ? status : 0;
        if (ok && !keep_alive) {
            close(c.fd);
            c.fd = -1;
        }
    }
    if (c.fd >= 0) close(c.fd);
    free(c.data);
    return NULL;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank percentile. */
static double percentile(const double *sorted, size_t count, double fraction) {
    if (count == 0) return 0;
    long index = lround(fraction * (double)count) - 1;
    if (index < 0) index = 0;
    if ((size_t)index >= count) index = (long)count - 1;
    return sorted[index];
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: load_client URL_FILE [CONCURRENCY]\n");
        return 2;
    }
    int concurrency = argc > 2 ? atoi(argv[2]) : 16;
    if (concurrency < 1) concurrency = 1;
    FILE *file = fopen(argv[1], "r");
    if (!file) {
        perror(argv[1]);
        return 2;
    }
    size_t capacity = 1024;
    paths = malloc(capacity * sizeof *paths);
    char *line = NULL;
    size_t line_capacity = 0;
    ssize_t read_length;
    while ((read_length = getline(&line, &line_capacity, file)) >= 0) {
        while (read_length > 0 && (line[read_length - 1] == '\n' || line[read_length - 1] == '\r')) line[--read_length] = '\0';
        if (read_length == 0 || line[0] == '#') continue;
        if (strncmp(line, "http://", 7) != 0) {
            fprintf(stderr, "load_client: only http:// URLs: %s\n", line);
            return 2;
        }
        char *authority = line + 7, *slash = strchr(authority, '/');
        size_t authority_length = slash ? (size_t)(slash - authority) : strlen(authority);
        char this_host[256] = "", this_port[16] = "80";
        char *colon = memchr(authority, ':', authority_length);
        size_t host_length = colon ? (size_t)(colon - authority) : authority_length;
        if (host_length >= sizeof this_host) return 2;
        memcpy(this_host, authority, host_length);
        if (colon) snprintf(this_port, sizeof this_port, "%.*s", (int)(authority_length - host_length - 1), colon + 1);
        if (path_count == 0) {
            strcpy(host, this_host);
            strcpy(port, this_port);
        } else if (strcmp(host, this_host) != 0 || strcmp(port, this_port) != 0) {
            fprintf(stderr, "load_client: every URL must name the same host and port: %s\n", line);
            return 2;
        }
        if (path_count == capacity) paths = realloc(paths, (capacity *= 2) * sizeof *paths);
        paths[path_count++] = strdup(slash ? slash : "/");
    }
    free(line);
    fclose(file);
    if (path_count == 0) {
        fprintf(stderr, "load_client: no URLs in %s\n", argv[1]);
        return 2;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
    int error = getaddrinfo(host, port, &hints, &address);
    if (error != 0) {
        fprintf(stderr, "load_client: %s: %s\n", host, gai_strerror(error));
        return 2;
    }
    latencies = calloc(path_count, sizeof *latencies);
    succeeded = calloc(path_count, sizeof *succeeded);
    body_bytes = calloc(path_count, sizeof *body_bytes);
    const char *trace = getenv("LOAD_CLIENT_TRACE");
    if (trace && *trace) {
        sent_at = calloc(path_count, sizeof *sent_at);
        statuses = calloc(path_count, sizeof *statuses);
        timings = calloc(path_count, sizeof *timings);
    }

    struct rusage usage_before, usage_after;
    getrusage(RUSAGE_SELF, &usage_before);
    double started = run_started = now_ms();
    pthread_t *threads = malloc((size_t)concurrency * sizeof *threads);
    for (int i = 0; i < concurrency; i++) pthread_create(&threads[i], NULL, worker, NULL);
    for (int i = 0; i < concurrency; i++) pthread_join(threads[i], NULL);
    double seconds = (now_ms() - started) / 1e3;
    getrusage(RUSAGE_SELF, &usage_after);
    double cpu = (usage_after.ru_utime.tv_sec - usage_before.ru_utime.tv_sec)
        + (usage_after.ru_utime.tv_usec - usage_before.ru_utime.tv_usec) / 1e6
        + (usage_after.ru_stime.tv_sec - usage_before.ru_stime.tv_sec)
        + (usage_after.ru_stime.tv_usec - usage_before.ru_stime.tv_usec) / 1e6;

    size_t failures = 0;
    long long total_bytes = 0;
    for (size_t i = 0; i < path_count; i++) {
        if (succeeded[i]) total_bytes += body_bytes[i];
        else failures++;
    }
    if (trace && *trace) {
        FILE *out = fopen(trace, "w");
        if (!out) {
            perror(trace);
            return 2;
        }
        for (size_t i = 0; i < path_count; i++)
            fprintf(out, "%.2f %.2f %d %s\n", sent_at[i], latencies[i], statuses[i], timings[i][0] ? timings[i] : "-");
        fclose(out);
    }
    qsort(latencies, path_count, sizeof *latencies, compare_doubles);
    printf("{\"requests\": %zu, \"concurrency\": %d, \"failures\": %zu, \"seconds\": %.4f, \"requests_per_s\": %.2f, "
           "\"p50_ms\": %.2f, \"p99_ms\": %.2f, \"bytes\": %lld, \"client_cpu_s\": %.3f}\n",
           path_count, concurrency, failures, seconds, (double)path_count / seconds,
           percentile(latencies, path_count, 0.50), percentile(latencies, path_count, 0.99), total_bytes, cpu);
    return 0;
}
