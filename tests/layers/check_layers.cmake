# Checks the include graph against the layer order: every `#include "inflect/<layer>/..."` in
# src/<L>/ and include/inflect/<L>/ must be of L itself or of a layer below L, and a layer's
# private headers (src/<layer>/*.hpp, included as "<layer>/x.hpp") are for that layer alone.
# "Below" is read from the root CMakeLists.txt, the one place the order is declared: the DEPS of
# each inflect_layer() call, transitively (docs/architecture.md's table mirrors them); src/cli (the
# executable, on top) may include every layer. Linking alone does not enforce this: every layer
# sees all of include/, and an upward include of an inline function compiles and links.
# Also fails on a src/<layer>/*.cpp that CMakeLists.txt does not list (sources are not globbed),
# and on a file docs/architecture.md does not name.
# Prints file:line of each include that breaks the order and fails.
#
#   cmake -P tests/layers/check_layers.cmake            (ROOT: the source tree, default ../..)
cmake_minimum_required(VERSION 3.20)

if(NOT DEFINED ROOT)
  get_filename_component(ROOT "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
endif()

# --- The layers and what each may include, from the inflect_layer() calls, lowest first. ---
file(READ "${ROOT}/CMakeLists.txt" cmakelists)
string(REGEX MATCHALL "\ninflect_layer\\([^)]*\\)" calls "${cmakelists}")
set(layers "")
foreach(call IN LISTS calls)
  string(REGEX MATCH "inflect_layer\\(([a-z_]+)" _ "${call}")
  set(layer "${CMAKE_MATCH_1}")
  string(REGEX MATCHALL "inflect_[a-z_]+" deps "${call}")
  list(REMOVE_ITEM deps inflect_layer)
  list(TRANSFORM deps REPLACE "^inflect_" "")
  set(below_${layer} "")
  foreach(dep IN LISTS deps)
    if(NOT dep IN_LIST layers)
      message(FATAL_ERROR "CMakeLists.txt: layer '${layer}' depends on '${dep}', which is not declared before it; "
                          "declare the layers lowest first")
    endif()
    list(APPEND below_${layer} ${dep} ${below_${dep}})
  endforeach()
  list(REMOVE_DUPLICATES below_${layer})
  list(APPEND layers ${layer})
  # The layer's listed sources (SOURCES a.cpp b.cpp ... up to the next keyword).
  set(sources_${layer} "")
  if(call MATCHES "SOURCES([^A-Z)]*)")
    string(REGEX MATCHALL "[A-Za-z0-9_]+\\.cpp" sources_${layer} "${CMAKE_MATCH_1}")
  endif()
endforeach()
list(LENGTH layers layer_count)
if(layer_count LESS 2)
  message(FATAL_ERROR "CMakeLists.txt: found ${layer_count} inflect_layer() calls; has the way layers are declared changed?")
endif()
set(below_cli ${layers})
set(layers_and_cli ${layers} cli)

# --- Sources are listed by hand (no glob): a .cpp in src/<layer>/ missing from its layer's SOURCES
# (or, for cli, from add_executable(inflect ...)) would silently not be built. ---
set(violations "")
string(REGEX MATCH "add_executable\\(inflect[^)]*\\)" cli_call "${cmakelists}")
string(REGEX MATCHALL "src/cli/[A-Za-z0-9_]+\\.cpp" cli_sources "${cli_call}")
list(TRANSFORM cli_sources REPLACE "^src/cli/" "")
set(sources_cli ${cli_sources})
file(GLOB_RECURSE cpp_files RELATIVE "${ROOT}" "${ROOT}/src/*.cpp")
foreach(file IN LISTS cpp_files)
  if(file MATCHES "^src/([^/]+)/([^/]+\\.cpp)$" AND CMAKE_MATCH_1 IN_LIST layers_and_cli)
    if(NOT CMAKE_MATCH_2 IN_LIST sources_${CMAKE_MATCH_1})
      string(APPEND violations "${file}: not listed in CMakeLists.txt (SOURCES of inflect_layer(${CMAKE_MATCH_1}), "
                               "or add_executable(inflect) for cli)\n")
    endif()
  endif()
endforeach()

# --- Every include of an inflect header, checked against its file's layer. ---
file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/src/*" "${ROOT}/include/*")
list(FILTER files INCLUDE REGEX "\\.(cpp|hpp|h|cc|inl)$")
list(SORT files)
set(checked 0)
foreach(file IN LISTS files)
  if(file MATCHES "^src/([^/]+)/")
    set(layer "${CMAKE_MATCH_1}")
  elseif(file MATCHES "^include/inflect/([^/]+)/")
    set(layer "${CMAKE_MATCH_1}")
  else()
    string(APPEND violations "${file}: not in src/<layer>/ or include/inflect/<layer>/\n")
    continue()
  endif()
  if(NOT layer IN_LIST layers_and_cli)
    string(APPEND violations "${file}: '${layer}' is no layer of CMakeLists.txt (add an inflect_layer() for it)\n")
    continue()
  endif()
  file(READ "${ROOT}/${file}" text)
  # One list element per line: first take out what CMake lists treat specially.
  string(REPLACE "\\" "/" text "${text}")
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "[" "(" text "${text}")
  string(REPLACE "]" ")" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  set(line_number 0)
  foreach(line IN LISTS text)
    math(EXPR line_number "${line_number} + 1")
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]+)[\">]")
      continue()
    endif()
    set(target "${CMAKE_MATCH_1}")
    if(target MATCHES "^inflect/([^/]+)/")
      set(included "${CMAKE_MATCH_1}")
      math(EXPR checked "${checked} + 1")
      if(included STREQUAL layer OR included IN_LIST below_${layer})
        continue()
      endif()
      if(NOT included IN_LIST layers)
        string(APPEND violations "${file}:${line_number}: includes \"${target}\": '${included}' is no layer\n")
      else()
        string(REPLACE ";" ", " allowed "${below_${layer}}")
        if(allowed STREQUAL "")
          set(allowed "none")
        endif()
        string(APPEND violations "${file}:${line_number}: layer '${layer}' includes \"${target}\" of layer '${included}', "
                                 "which is not below it (below ${layer}: ${allowed})\n")
      endif()
    elseif(line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([^/\"]+)/" AND CMAKE_MATCH_1 IN_LIST layers_and_cli)
      set(included "${CMAKE_MATCH_1}")
      math(EXPR checked "${checked} + 1")
      if(NOT included STREQUAL layer)
        string(APPEND violations "${file}:${line_number}: layer '${layer}' includes \"${target}\", a private header of "
                                 "layer '${included}' (src/${included}/ is for that layer alone)\n")
      endif()
    endif()
  endforeach()
endforeach()

# --- docs/architecture.md names every file (its file map), so the page cannot fall behind the
# tree: a file is named as `x.cpp`, `x.hpp` or `x.{hpp,cpp}`. ---
file(READ "${ROOT}/docs/architecture.md" architecture)
foreach(file IN LISTS files)
  get_filename_component(name "${file}" NAME)
  get_filename_component(stem "${file}" NAME_WE)
  string(FIND "${architecture}" "${name}" at_name)
  string(FIND "${architecture}" "${stem}.{" at_stem)
  if(at_name EQUAL -1 AND at_stem EQUAL -1)
    string(APPEND violations "${file}: not named in docs/architecture.md (its file map, \"Where each file lives\")\n")
  endif()
endforeach()

list(LENGTH files file_count)
string(REPLACE ";" ", " declared "${layers}")
if(NOT violations STREQUAL "")
  string(REGEX MATCHALL "\n" count "${violations}")
  list(LENGTH count count)
  message(NOTICE "${violations}")  # unwrapped, one file:line per line
  message(FATAL_ERROR "${count} includes or files break the layer order, the source lists of CMakeLists.txt or the file map of docs/architecture.md (${declared}, then cli)")
endif()
message(STATUS "layers: ${checked} includes in ${file_count} files, each of its own layer or one below "
               "(CMakeLists.txt: ${declared}, then cli)")
