# The gateways under Nomad: two, on two hosts, stateless. They find the
# runners through Consul DNS: the hosts' resolver must forward .consul to
# the Consul agent (e.g. systemd-resolved: DNS=127.0.0.1:8600,
# Domains=~consul), since the gateway asks the system resolver.
# What they share comes from Nomad variables (docs/deploy.md):
#   nomad var put nomad/jobs/sandbox-gateway keys=@keys \
#     preview_secret=@preview-secret runner_ca=@ca.crt \
#     client_crt=@gateway-gw.crt client_key=@gateway-gw.key \
#     public_crt=@public.crt public_key=@public.key
# Point a layer-4 load balancer, and sandbox.example.com and
# *.sandbox.example.com, at port 8443 of the gateway hosts.
job "sandbox-gateway" {
  type = "service"

  group "gateway" {
    count = 2

    constraint {
      operator = "distinct_hosts"
      value    = "true"
    }

    network {
      port "https" {
        static = 8443
      }
    }

    service {
      name     = "sandbox-gateway"
      port     = "https"
      provider = "consul"
      check {
        type            = "http"
        protocol        = "https"
        path            = "/healthz"
        tls_skip_verify = true
        interval        = "5s"
        timeout         = "2s"
      }
    }

    task "gateway" {
      driver = "exec"
      user   = "nobody"

      config {
        command = "/usr/bin/sandbox-gateway"
        args = [
          "--port", "${NOMAD_PORT_https}",
          "--listen-address", "0.0.0.0",
          "--cert", "${NOMAD_SECRETS_DIR}/public.crt",
          "--key", "${NOMAD_SECRETS_DIR}/public.key",
          "--keys-file", "${NOMAD_SECRETS_DIR}/keys",
          "--preview-domain", "sandbox.example.com",
          "--preview-secret-file", "${NOMAD_SECRETS_DIR}/preview-secret",
          "--web-dir", "/usr/share/sandbox/web",
          "--runners-dns", "_sandbox-runner._tcp.service.consul",
          "--discovery-interval-ms", "5000",
          "--runner-ca", "${NOMAD_SECRETS_DIR}/runner-ca.crt",
          "--runner-cert", "${NOMAD_SECRETS_DIR}/client.crt",
          "--runner-key", "${NOMAD_SECRETS_DIR}/client.key",
        ]
      }

      # Each file owned by the task's user, 0600 (the gateway refuses a
      # preview secret group or others may read). A changed API key list
      # is re-read on SIGHUP; the rest at a restart.
      template {
        destination = "secrets/keys"
        data        = "{{ with nomadVar \"nomad/jobs/sandbox-gateway\" }}{{ .keys }}{{ end }}"
        perms       = "0600"
        uid         = 65534
        gid         = 65534
        change_mode   = "signal"
        change_signal = "SIGHUP"
      }
      template {
        destination = "secrets/preview-secret"
        data        = "{{ with nomadVar \"nomad/jobs/sandbox-gateway\" }}{{ .preview_secret }}{{ end }}"
        perms       = "0600"
        uid         = 65534
        gid         = 65534
      }
      template {
        destination = "secrets/runner-ca.crt"
        data        = "{{ with nomadVar \"nomad/jobs/sandbox-gateway\" }}{{ .runner_ca }}{{ end }}"
        perms       = "0600"
        uid         = 65534
        gid         = 65534
      }
      template {
        destination = "secrets/client.crt"
        data        = "{{ with nomadVar \"nomad/jobs/sandbox-gateway\" }}{{ .client_crt }}{{ end }}"
        perms       = "0600"
        uid         = 65534
        gid         = 65534
      }
      template {
        destination = "secrets/client.key"
        data        = "{{ with nomadVar \"nomad/jobs/sandbox-gateway\" }}{{ .client_key }}{{ end }}"
        perms       = "0600"
        uid         = 65534
        gid         = 65534
      }
      template {
        destination = "secrets/public.crt"
        data        = "{{ with nomadVar \"nomad/jobs/sandbox-gateway\" }}{{ .public_crt }}{{ end }}"
        perms       = "0600"
        uid         = 65534
        gid         = 65534
      }
      template {
        destination = "secrets/public.key"
        data        = "{{ with nomadVar \"nomad/jobs/sandbox-gateway\" }}{{ .public_key }}{{ end }}"
        perms       = "0600"
        uid         = 65534
        gid         = 65534
      }

      resources {
        cpu    = 500
        memory = 256
      }
    }
  }
}
