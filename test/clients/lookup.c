/* getaddrinfo(3) as an application calls it: one lookup per name given, AF_UNSPEC (A and AAAA), the
 * addresses printed one per line, "name: error" when it fails; with -t first, "name microseconds"
 * per lookup instead (bench/autopath.ts). Built with gcc (glibc) and musl-gcc (musl) by
 * test/helpers/resolvers.ts; exit 2 when any lookup failed. */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static long long now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int main(int argc, char **argv) {
  int failed = 0;
  int timed = argc > 1 && strcmp(argv[1], "-t") == 0;
  for (int i = timed ? 2 : 1; i < argc; i++) {
    struct addrinfo hints, *res, *p;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    long long started = now_us();
    int rc = getaddrinfo(argv[i], NULL, &hints, &res);
    if (rc != 0) {
      printf("%s: %s\n", argv[i], gai_strerror(rc));
      failed = 1;
      continue;
    }
    if (timed) {
      printf("%s %lld\n", argv[i], now_us() - started);
      freeaddrinfo(res);
      continue;
    }
    for (p = res; p != NULL; p = p->ai_next) {
      char text[INET6_ADDRSTRLEN];
      const void *addr = p->ai_family == AF_INET ? (const void *)&((struct sockaddr_in *)p->ai_addr)->sin_addr
                                                 : (const void *)&((struct sockaddr_in6 *)p->ai_addr)->sin6_addr;
      inet_ntop(p->ai_family, addr, text, sizeof text);
      printf("%s %s\n", argv[i], text);
    }
    freeaddrinfo(res);
  }
  return failed ? 2 : 0;
}
