/* Replays fuzz inputs without libFuzzer (ordinary builds): every file named
 * on the command line, or in a directory named there, is run once through
 * LLVMFuzzerTestOneInput. The corpus in tests/fuzz/corpus/<target>/ and
 * every past crash (regressions) run this way in the fuzz suite. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return 1;
  }
  uint8_t *buf = malloc(1 << 20);
  size_t n = buf ? fread(buf, 1, 1 << 20, f) : 0;
  fclose(f);
  if (buf == NULL)
    return 1;
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

int main(int argc, char **argv)
{
  int files = 0, errors = 0;
  for (int i = 1; i < argc; i++) {
    struct stat sb;
    if (stat(argv[i], &sb) != 0) {
      perror(argv[i]);
      return 1;
    }
    if (!S_ISDIR(sb.st_mode)) {
      errors += run_file(argv[i]);
      files++;
      continue;
    }
    struct dirent **names;
    int n = scandir(argv[i], &names, NULL, alphasort);
    for (int j = 0; j < n; j++) {
      if (names[j]->d_name[0] != '.') {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", argv[i], names[j]->d_name);
        errors += run_file(path);
        files++;
      }
      free(names[j]);
    }
    free(names);
  }
  /* An empty input too: the smallest case. */
  LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
  printf("replayed %d inputs\n", files + 1);
  return errors ? 1 : 0;
}
