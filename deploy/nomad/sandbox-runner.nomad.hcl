# The runners under Nomad: a system job, one runner on every client whose
# configuration says (client { meta { ... } }):
#   sandbox_runner      = "true"
#   sandbox_runner_name = "r7"     # 1..16 of [a-z0-9], unique, stable
# The name is chosen with the node, not derived: it is part of every
# sandbox id, and its certificate must carry it. Before adding the meta,
# put on the node (0700, root) /etc/sandbox/tls/runner.crt and runner.key
# (deploy/certs.sh runner DIR r7) and client-ca.crt (the gateways' CA), and
# the image at /var/cache/sandbox/images/default/rootfs; `make install`
# puts the programs in /usr/bin.
#
# raw_exec: the runner is the isolation (namespaces, cgroups, uid slots),
# run as root on the host like its systemd unit; Nomad starts, restarts
# and registers it in Consul, where the gateways find it
# (_sandbox-runner._tcp.service.consul, or sandbox-runner.service.consul
# with --runner-port 7443).
job "sandbox-runner" {
  type = "system"

  constraint {
    attribute = "${meta.sandbox_runner}"
    value     = "true"
  }
  constraint {
    attribute = "${meta.sandbox_runner_name}"
    operator  = "is_set"
  }

  group "runner" {
    network {
      port "runner" {
        static = 7443
      }
    }

    # No Consul health check: a TCP check would open TLS connections the
    # runner refuses (and logs); the gateways probe each runner themselves.
    service {
      name     = "sandbox-runner"
      port     = "runner"
      provider = "consul"
    }

    task "runner" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/sandbox-runner"
        args = [
          "--name", "${meta.sandbox_runner_name}",
          "--socket", "/run/sandbox/runner.sock",
          "--state-dir", "/var/lib/sandbox",
          "--image-dir", "/var/cache/sandbox/images",
          "--listen-tls", "${NOMAD_ADDR_runner}",
          "--cert", "/etc/sandbox/tls/runner.crt",
          "--key", "/etc/sandbox/tls/runner.key",
          "--client-ca", "/etc/sandbox/tls/client-ca.crt",
        ]
      }

      # Stopping: Nomad takes the service out of Consul first, then waits
      # shutdown_delay before SIGTERM. The gateways stop placing on it at
      # their next resolution (5 s) and keep routing to its sandboxes,
      # which meanwhile run on. Drain for longer by hand first
      # (docs/deploy.md: SIGUSR1, then wait for "sandboxes":0).
      shutdown_delay = "30s"
      # SIGTERM stops every sandbox in at most 10 s; the client's
      # max_kill_timeout (default 30 s) caps this
      kill_signal  = "SIGTERM"
      kill_timeout = "30s"

      resources {
        cpu    = 200
        memory = 128
      }
    }
  }
}
