/* The hiredis side of the Redis client benchmark: reads the keys RedisClientBenchmark stored
 * (keys.txt) with Debian's hiredis, one GET at a time and IN_FLIGHT pipelined at a time
 * (redisAppendCommand, then redisGetReply), and checks each value as Alcedo's shared tier does:
 * the SHA-256 of everything after the 13-byte header against the 8 checksum bytes in it, then a
 * copy of the value into a buffer of its own. With "raw", no check and no copy: GET alone.
 * Usage: hiredis-get PORT KEYS_FILE IN_FLIGHT [raw]. Prints one JSON line. */
#include <hiredis/hiredis.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int raw = 0;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void check(redisReply *reply) {
    if (reply == NULL || reply->type != REDIS_REPLY_STRING || reply->len < 13) {
        fprintf(stderr, "hiredis-get: missing or short value\n");
        exit(1);
    }
    if (!raw) {
        unsigned char digest[SHA256_DIGEST_LENGTH];
        SHA256((const unsigned char *)reply->str + 13, reply->len - 13, digest);
        if (memcmp(digest, reply->str + 5, 8) != 0) {
            fprintf(stderr, "hiredis-get: checksum mismatch\n");
            exit(1);
        }
        char *copy = malloc(reply->len);
        memcpy(copy, reply->str, reply->len);
        __asm__ volatile("" : : "r"(copy) : "memory");
        free(copy);
    }
    freeReplyObject(reply);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: hiredis-get PORT KEYS_FILE IN_FLIGHT [raw]\n");
        return 2;
    }
    int port = atoi(argv[1]), in_flight = atoi(argv[3]);
    raw = argc > 4 && strcmp(argv[4], "raw") == 0;
    FILE *file = fopen(argv[2], "r");
    if (!file) { perror("keys"); return 1; }
    char **keys = NULL, line[512];
    int count = 0;
    while (fgets(line, sizeof line, file)) {
        line[strcspn(line, "\n")] = 0;
        if (!*line) continue;
        keys = realloc(keys, sizeof(char *) * (count + 1));
        keys[count++] = strdup(line);
    }
    fclose(file);
    redisContext *c = redisConnect("127.0.0.1", port);
    if (c == NULL || c->err) { fprintf(stderr, "hiredis-get: cannot connect\n"); return 1; }

    double start = now();
    for (int i = 0; i < count; i++) check(redisCommand(c, "GET %s", keys[i]));
    double sequential = now() - start;

    start = now();
    for (int i = 0; i < count; i += in_flight) {
        int n = count - i < in_flight ? count - i : in_flight;
        for (int j = 0; j < n; j++) redisAppendCommand(c, "GET %s", keys[i + j]);
        for (int j = 0; j < n; j++) {
            void *reply = NULL;
            if (redisGetReply(c, &reply) != REDIS_OK) { fprintf(stderr, "hiredis-get: %s\n", c->errstr); return 1; }
            check(reply);
        }
    }
    double pipelined = now() - start;
    printf("{\"client\": \"hiredis%s\", \"gets\": %d, \"in_flight\": %d, \"sequential_s\": %f, \"pipelined_s\": %f}\n",
           raw ? "-raw" : "", count, in_flight, sequential, pipelined);
    redisFree(c);
    return 0;
}
