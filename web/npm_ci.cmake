# Installs web/node_modules from the checked-in lockfile with `npm ci`, once
# per lockfile: a second build directory (the sanitizer pass) finds the
# lockfile's hash in node_modules and skips the install.
#   cmake -DWEB_DIR=... -DNPM=... -DSTAMP=... -P npm_ci.cmake
file(SHA256 ${WEB_DIR}/package-lock.json want)
set(have "")
if(EXISTS ${WEB_DIR}/node_modules/.meridian-lock.sha256)
  file(READ ${WEB_DIR}/node_modules/.meridian-lock.sha256 have)
endif()
if(NOT have STREQUAL want)
  execute_process(COMMAND ${NPM} ci --no-audit --no-fund --prefer-offline --loglevel=error
                  WORKING_DIRECTORY ${WEB_DIR} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "web: `npm ci` in ${WEB_DIR} failed (exit ${rc}); the dashboard needs "
                        "Node.js >= 20.19 and npm with access to the npm registry (docs/dashboard.md)")
  endif()
  file(WRITE ${WEB_DIR}/node_modules/.meridian-lock.sha256 "${want}")
endif()
file(TOUCH ${STAMP})
