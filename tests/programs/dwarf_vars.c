// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Source variables for the debug-information tests: gdb is the oracle of
// their values (tests/oracle/dwarf_values.sh), and the tests of errors name
// them (tests/unit/cli/variable_args_test.cc). Structures, pointers, arrays,
// bitfields, a union, an enum, globals, a loop, an inlined function and
// recursion. The tests name lines by number: keep the layout, or update the
// tests with it.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum color { RED, GREEN = 5, BLUE };

struct point {
  int x;
  int y;
};

struct node {
  int id;
  const char* name;
  struct point pos;
  unsigned flags : 3;
  unsigned level : 5;
  char tag[8];
  short scores[4];
  enum color color;
  struct node* next;
  union {
    long as_long;
    unsigned char bytes[8];
  } u;
};

struct node* list_head;                  // a global pointer (.bss)
int visits;                              // a global counter (.bss)
static const char greeting[] = "hello";  // a global char array (.rodata)
long table[3] = {10, 20, 30};            // a global array (.data)
volatile long sink;

static inline __attribute__((always_inline)) int weigh(const struct node* n) {
  int w = n->id * 2 + n->pos.x;
  return w;
}

__attribute__((noinline)) int visit(struct node* it, int depth) {
  int score = weigh(it) + depth;
  visits++;
  if (it->next != NULL) score += visit(it->next, depth + 1);
  sink += score;
  return score;
}

__attribute__((noinline)) long sum(const long* values, int count) {
  long total = 0;
  for (int i = 0; i < count; i++) {
    total += values[i];
  }
  return total;
}

int main(int argc, char** argv) {
  static const char* names[] = {"first", "second", "third"};
  struct node nodes[3];
  memset(nodes, 0, sizeof nodes);
  for (int i = 0; i < 3; i++) {
    nodes[i].id = (i + 1) * (argc > 5 ? 2 : 1);
    nodes[i].name = names[i];
    nodes[i].pos.x = 10 * i;
    nodes[i].pos.y = -7 * i;
    nodes[i].flags = (unsigned)(i + 5) & 7u;
    nodes[i].level = (unsigned)(20 + i);
    snprintf(nodes[i].tag, sizeof nodes[i].tag, "tag%d", i);
    for (int k = 0; k < 4; k++) nodes[i].scores[k] = (short)(i * 100 - k);
    nodes[i].color = i == 0 ? RED : i == 1 ? GREEN : BLUE;
    nodes[i].next = i < 2 ? &nodes[i + 1] : NULL;
    nodes[i].u.as_long = 0x0102030405060708L * (i + 1);
  }
  list_head = &nodes[0];
  int score = visit(list_head, 0);
  long total = sum(table, 3);
  printf("%d %ld %s %d\n", score, total, greeting, visits);
  return argc > 1 ? atoi(argv[1]) : 0;
}
