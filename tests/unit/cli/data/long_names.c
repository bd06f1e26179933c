// Copyright 2026 The dprobe Authors. SPDX-License-Identifier: Apache-2.0
//
// Two functions whose default event names ("p_<name>_0") are the same once
// cut to the kernel's 63-character limit: a wildcard over them must still
// give each its own event name.
int a_function_whose_name_is_long_enough_to_be_cut_by_the_event_name_limit_one(int x) {
  return x + 1;
}
int a_function_whose_name_is_long_enough_to_be_cut_by_the_event_name_limit_two(int x) {
  return x + 2;
}
