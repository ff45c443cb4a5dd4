/* `sandbox-runner ctl status|drain|undrain [--socket PATH]`: send the op
 * to a running runner's control socket and print its reply. What a
 * Kubernetes preStop hook or an operator runs. */
#ifndef RN_CTL_H
#define RN_CTL_H

/* argv[0] is "ctl". Returns the exit status: 0 the runner said ok, 1 it
 * said an error or could not be reached, 2 a usage error. */
int rn_ctl_main(int argc, char **argv);

#endif
