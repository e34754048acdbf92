#!/usr/bin/env bash
# scripts/tun.sh start|stop|status N [--netns NAME] [--user USER]
#
# start: creates the persistent TUN device tunN with 169.254.N.1/24 and
# fd00:7474:N::1/64 (N's decimal digits as the group; no DAD) on the kernel
# side (the stack uses 169.254.N.9 and fd00:7474:N::9), txqueuelen 10000, link up; with
# --netns, inside that network namespace (created if missing). --user lets that
# user open the device without root. stop: deletes tunN (a namespace stays).
# Idempotent; touches only tunN, 169.254.N.0/24 and fd00:7474:N::/64; never enables forwarding
# or NAT. Needs root.
exec "$(dirname "$0")/tuntap.sh" tun "$@"
