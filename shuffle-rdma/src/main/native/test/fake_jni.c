#include "fake_jni.h"

#include <stdio.h>
#include <string.h>

static char pending_class[256];
static char pending_message[1024];
static int pending;

static jclass JNICALL fake_find_class(JNIEnv *env, const char *name) {
  (void)env;
  snprintf(pending_class, sizeof(pending_class), "%s", name);
  return (jclass)pending_class; /* any non-NULL value */
}

static jint JNICALL fake_throw_new(JNIEnv *env, jclass cls, const char *message) {
  (void)env;
  (void)cls;
  snprintf(pending_message, sizeof(pending_message), "%s", message);
  pending = 1;
  return 0;
}

static jboolean JNICALL fake_exception_check(JNIEnv *env) {
  (void)env;
  return pending ? JNI_TRUE : JNI_FALSE;
}

static struct JNINativeInterface_ table;
static const struct JNINativeInterface_ *env_ptr;

JNIEnv *fake_env(void) {
  memset(&table, 0, sizeof(table));
  table.FindClass = fake_find_class;
  table.ThrowNew = fake_throw_new;
  table.ExceptionCheck = fake_exception_check;
  env_ptr = &table;
  return (JNIEnv *)&env_ptr;
}

const char *fake_exception_class(void) {
  return pending ? pending_class : "";
}

const char *fake_exception_message(void) {
  return pending ? pending_message : "";
}

int fake_exception_pending(void) {
  return pending;
}

void fake_exception_clear(void) {
  pending = 0;
  pending_class[0] = '\0';
  pending_message[0] = '\0';
}
