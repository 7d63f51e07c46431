# start_postgres: install Debian's PostgreSQL if missing, start the cluster, create the duet role.
# Sets PG_URL for the test database server (the tests create and drop their own test database).
start_postgres() {
  apt_install postgresql
  local version
  version="$(ls /usr/lib/postgresql | sort -V | tail -1)"
  if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main"' | grep -q .; then
    as_root pg_createcluster "$version" main >/dev/null
  fi
  if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" && $4 == "online"' | grep -q .; then
    echo "==> starting PostgreSQL $version"
    as_root pg_ctlcluster "$version" main start
  fi
  local port
  port="$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {print $3}')"
  for _ in $(seq 1 30); do
    as_root runuser -u postgres -- pg_isready -q -p "$port" && break
    sleep 1
  done
  # The role's password is random, made once per machine (every checkout on it shares the server,
  # so a per-checkout password would lock the others out), kept outside the repository.
  local password pwdir="${DUET_PG_SECRET_DIR:-$HOME/.config/duet}"
  local pwfile="$pwdir/pg-test-password"
  mkdir -p "$pwdir"
  if [ ! -s "$pwfile" ]; then
    (umask 077; head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' >"$pwfile.tmp" && mv -n "$pwfile.tmp" "$pwfile")
    rm -f "$pwfile.tmp"
  fi
  password="$(cat "$pwfile")"
  as_root runuser -u postgres -- psql -q -p "$port" -v ON_ERROR_STOP=1 <<SQL >/dev/null
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'duet') THEN
    CREATE ROLE duet LOGIN CREATEDB;
  END IF;
END \$\$;
ALTER ROLE duet PASSWORD '$password';
SQL
  # One database name per checkout, so two checkouts' test runs (test_<name>) never collide.
  local dbname
  dbname="duet_$(printf '%s' "$ROOT" | md5sum | cut -c1-8)"
  if ! as_root runuser -u postgres -- psql -p "$port" -tAc "SELECT 1 FROM pg_database WHERE datname = '$dbname'" | grep -q 1; then
    as_root runuser -u postgres -- createdb -p "$port" -O duet "$dbname"
  fi
  export PG_URL="postgres://duet:$password@127.0.0.1:$port/$dbname"
}
