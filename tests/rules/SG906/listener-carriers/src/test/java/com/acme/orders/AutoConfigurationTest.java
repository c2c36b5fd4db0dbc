package com.acme.orders;

import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.junit.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

// A negative test: the context with the wrong listener must fail to start (IllegalStateException), and
// it is the only place that registers it. The context with the right listener is a normal test.
public class AutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner();

    @Test(expected = IllegalStateException.class)
    public void wrongListenerTypeIsRefused() {
        runner.withUserConfiguration(WrongListenerConfig.class).run(context -> context.getBean(WrongListener.class));
    }

    @Test
    public void rightListenerStarts() {
        runner.withUserConfiguration(RightListenerConfig.class).run(context -> context.getBean(RightListener.class));
    }

    @Test
    public void halfRightListenerStarts() {
        runner.withUserConfiguration(HalfRightConfig.class).run(context -> context.getBean(HalfRightListener.class));
    }

    @Configuration
    static class WrongListenerConfig {
        @Bean
        public Object wrongListener() {
            return new WrongListener();
        }
    }

    @Configuration
    static class RightListenerConfig {
        @Bean
        public Object rightListener() {
            return new RightListener();
        }
    }

    @Configuration
    static class HalfRightConfig {
        @Bean
        public Object halfRightListener() {
            return new HalfRightListener();
        }
    }

    // ok: SG906
    @RocketMQMessageListener(consumerGroup = "GID_WRONG", topic = "TopicOrders")
    static class WrongListener {
        public String onMessage(String message) {
            return message;
        }
    }

    // ok: SG906
    @RocketMQMessageListener(consumerGroup = "GID_RIGHT", topic = "TopicOrders")
    static class RightListener implements RocketMQListener<String> {
        @Override
        public void onMessage(String message) {
        }
    }

    // Registered by a normal test: the context it is in starts, and the listener is refused there.
    // ruleid: SG906
    @RocketMQMessageListener(consumerGroup = "GID_HALF", topic = "TopicPayments")
    static class HalfRightListener {
        public String onMessage(String message) {
            return message;
        }
    }
}
