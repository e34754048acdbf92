#!/usr/bin/env bash
# scripts/tap.sh start|stop|status N [--netns NAME] [--user USER]
#
# Like scripts/tun.sh, for the TAP device tapN (Ethernet frames; the kernel
# side answers ARP for 169.254.N.1 and asks for 169.254.N.9, the stack; over
# IPv6 it answers neighbor solicitations for fd00:7474:N::1 and solicits
# fd00:7474:N::9).
exec "$(dirname "$0")/tuntap.sh" tap "$@"
