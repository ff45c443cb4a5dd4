/* `sandbox-runner image import FILE NAME` and `sandbox-runner image pull
 * REF NAME`: the import on this host's image store, without a running
 * runner (the daemon's `image_import` op runs the same code). */
#ifndef RN_IMAGE_CLI_H
#define RN_IMAGE_CLI_H
int rn_image_main(int argc, char **argv);
#endif
