// Linux's epoll for the benchmark client (Glibc's Swift module does not export it).
#pragma once
#include <sys/epoll.h>
