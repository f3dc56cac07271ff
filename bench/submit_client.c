// A keep-alive HTTP/1.1 client for bench/scheduler.sh: posts the same JSON body COUNT times
// over ONE connection, one request in flight, and prints how long each group of GROUP requests
// took and the per-request latencies. Small and allocation-free per request, so that the server,
// not the client, is what is measured (a Python http.client loop tops out near 10,000/s here).
//
//   submit_client PORT PATH BODYFILE COUNT GROUP STATUS [EXPECT]
//   submit_client --batch PORT SESSION BODYFILE COUNT TIMEOUT
//
// --batch posts BODYFILE to /v1/sessions/SESSION/tasks:batch, then long-polls the session's
// didCompleteWithError events over the same connection until COUNT arrived, and prints
//   completed N failed F seconds S   (S from the POST's first byte to the last completion)
// Exits 1 if they do not all arrive within TIMEOUT seconds. One small process for the whole
// wait: a shell loop that started curl, grep and wc for every poll took about half a core of the
// 2-core machine away from the daemon it was timing, and Python's start alone costs 150 ms.
//
// BODYFILE "-" sends GET PATH without a body instead (bench/scale.sh's reads).
// Connects to 127.0.0.1:PORT. Every answer must have status STATUS and a Content-Length (no
// chunked bodies, no Connection: close); if EXPECT is given, the answers containing it are
// counted. Prints, on stdout:
//   group K SECONDS            one line per group of GROUP requests
//   total COUNT SECONDS
//   latency_us MEDIAN MIN MAX  per request, from the first byte written to the last byte read
//   matched N                  answers containing EXPECT
//   last BODY                  the last answer's body (at most 4096 bytes)
// Exits 1 with a message on stderr at the first error.
#define _GNU_SOURCE // strcasestr
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void fail(const char *what) {
    fprintf(stderr, "submit_client: %s%s%s\n", what, errno ? ": " : "", errno ? strerror(errno) : "");
    exit(1);
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char *buffer;
static size_t capacity, filled;

// Reads one response into `buffer`; returns its status, sets *body and *length.
static int read_response(int fd, char **body, size_t *length) {
    filled = 0;
    for (;;) {
        buffer[filled] = 0;
        char *end = strstr(buffer, "\r\n\r\n");
        if (end) {
            char *cl = strcasestr(buffer, "\r\ncontent-length:");
            if (!cl || cl > end) fail("an answer without Content-Length");
            size_t need = (size_t)(end + 4 - buffer) + strtoul(cl + 17, NULL, 10);
            if (need + 1 > capacity) {
                capacity = need + 1;
                buffer = realloc(buffer, capacity);
                if (!buffer) fail("out of memory");
            }
            while (filled < need) {
                ssize_t n = read(fd, buffer + filled, need - filled);
                if (n <= 0) fail("the connection closed mid-body");
                filled += (size_t)n;
            }
            buffer[filled] = 0;
            char *headers_end = strstr(buffer, "\r\n\r\n");
            *body = headers_end + 4;
            *length = filled - (size_t)(*body - buffer);
            return atoi(buffer + 9);
        }
        if (filled + 1 >= capacity) fail("headers larger than the buffer");
        ssize_t n = read(fd, buffer + filled, capacity - filled - 1);
        if (n <= 0) fail("the connection closed before an answer");
        filled += (size_t)n;
    }
}

static int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) fail("socket");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) fail("connect");
    return fd;
}

static void send_all(int fd, const char *bytes, size_t size) {
    size_t written = 0;
    while (written < size) {
        ssize_t n = write(fd, bytes + written, size - written);
        if (n <= 0) fail("write");
        written += (size_t)n;
    }
}

// A POST of PATH with the file's bytes as its JSON body, head and body in one allocation.
static char *post_request(const char *path, int port, const char *body_file, size_t *size) {
    FILE *file = fopen(body_file, "rb");
    if (!file) fail("cannot open BODYFILE");
    fseek(file, 0, SEEK_END);
    long body_size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char head[512];
    int head_size = snprintf(head, sizeof head,
                             "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                             "Content-Length: %ld\r\n\r\n", path, port, body_size);
    *size = (size_t)head_size + (size_t)body_size;
    char *request = malloc(*size);
    if (!request) fail("out of memory");
    memcpy(request, head, (size_t)head_size);
    if (fread(request + head_size, 1, (size_t)body_size, file) != (size_t)body_size) fail("cannot read BODYFILE");
    fclose(file);
    return request;
}

static long occurrences(const char *text, const char *needle) {
    long n = 0;
    for (const char *at = strstr(text, needle); at; at = strstr(at + 1, needle)) n++;
    return n;
}

static int batch_and_wait(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: submit_client --batch PORT SESSION BODYFILE COUNT TIMEOUT\n");
        return 2;
    }
    int port = atoi(argv[2]);
    const char *session = argv[3];
    long count = atol(argv[5]);
    double timeout = atof(argv[6]);
    char path[256];
    snprintf(path, sizeof path, "/v1/sessions/%s/tasks:batch", session);
    size_t request_size;
    char *request = post_request(path, port, argv[4], &request_size);
    capacity = 1 << 20;
    buffer = malloc(capacity);
    if (!buffer) fail("out of memory");
    int fd = connect_to(port);

    char *body = NULL;
    size_t length = 0;
    double start = now();
    send_all(fd, request, request_size);
    int got = read_response(fd, &body, &length);
    if (got / 100 != 2) {
        fprintf(stderr, "submit_client: the batch answered %d: %.500s\n", got, body);
        return 1;
    }
    long completed = 0, failed = 0, after = 0;
    while (completed < count) {
        if (now() - start > timeout) {
            fprintf(stderr, "submit_client: only %ld of %ld tasks completed within %.0f s\n", completed, count, timeout);
            return 1;
        }
        char poll[512];
        int poll_size = snprintf(poll, sizeof poll,
                                 "GET /v1/sessions/%s/events?after=%ld&wait=30&limit=1000&types=didCompleteWithError "
                                 "HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", session, after, port);
        send_all(fd, poll, (size_t)poll_size);
        got = read_response(fd, &body, &length);
        if (got != 200) {
            fprintf(stderr, "submit_client: an events poll answered %d: %.500s\n", got, body);
            return 1;
        }
        completed += occurrences(body, "\"type\":\"didCompleteWithError\"");
        failed += occurrences(body, "\"error\":{");
        const char *next = NULL;
        for (const char *at = strstr(body, "\"next\":"); at; at = strstr(at + 1, "\"next\":")) next = at;
        if (next) after = atol(next + 7);
    }
    double total = now() - start;
    close(fd);
    printf("completed %ld failed %ld seconds %.6f\n", completed, failed, total);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--batch") == 0) return batch_and_wait(argc, argv);
    if (argc < 7) {
        fprintf(stderr, "usage: submit_client PORT PATH BODYFILE COUNT GROUP STATUS [EXPECT]\n");
        return 2;
    }
    int port = atoi(argv[1]);
    const char *path = argv[2];
    long count = atol(argv[4]), group = atol(argv[5]);
    int status = atoi(argv[6]);
    const char *expect = argc > 7 ? argv[7] : NULL;
    if (count <= 0 || group <= 0) fail("COUNT and GROUP must be positive");

    int get = strcmp(argv[3], "-") == 0;
    size_t request_size;
    char *request;
    if (get) {
        char head[512];
        int head_size = snprintf(head, sizeof head, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", path, port);
        request_size = (size_t)head_size;
        request = strdup(head);
        if (!request) fail("out of memory");
    } else {
        request = post_request(path, port, argv[3], &request_size);
    }

    capacity = 1 << 16;
    buffer = malloc(capacity);
    double *latencies = malloc(sizeof(double) * (size_t)count);
    if (!buffer || !latencies) fail("out of memory");

    int fd = connect_to(port);

    long matched = 0;
    char *body = NULL;
    size_t length = 0;
    double start = now(), group_start = start;
    for (long i = 0; i < count; i++) {
        double sent = now();
        send_all(fd, request, request_size);
        int got = read_response(fd, &body, &length);
        double done = now();
        latencies[i] = done - sent;
        if (got != status) {
            fprintf(stderr, "submit_client: request %ld answered %d, expected %d: %.500s\n", i + 1, got, status, body);
            return 1;
        }
        if (expect && strstr(body, expect)) matched++;
        if ((i + 1) % group == 0 || i + 1 == count) {
            printf("group %ld %.6f\n", i / group + 1, done - group_start);
            group_start = done;
        }
    }
    double total = now() - start;
    close(fd);
    printf("total %ld %.6f\n", count, total);
    qsort(latencies, (size_t)count, sizeof(double), compare);
    printf("latency_us %.1f %.1f %.1f\n", latencies[count / 2] * 1e6, latencies[0] * 1e6, latencies[count - 1] * 1e6);
    printf("matched %ld\n", matched);
    printf("last %.4096s\n", body ? body : "");
    return 0;
}
