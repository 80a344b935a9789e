#ifndef CX_MOSQUITTO_SHIM_H
#define CX_MOSQUITTO_SHIM_H
/* libmosquitto from the system (Debian: libmosquitto-dev): the MQTT client an app's
   Appwrite SDK is played with, and the backend's publisher in scenarios; and the Linux
   calls the one event loop all of a process's connections share is made of. */
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
